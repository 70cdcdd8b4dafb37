#include "model.h"

#include <sstream>

OpbModel textbook_opb(OpbFormula f, unsigned T, unsigned Z) {
    std::ostringstream s;
    switch (f) {
    case OpbFormula::Basic:
        return {kFlopsPerPoint / (7.0 * 4.0), "13 / (7·4)"};
    case OpbFormula::CubeTile: {
        double out = double(T - 2) * (T - 2) * (T - 2), in = double(T) * T * T;
        s << "13·(T-2)³ / (4·T³), T = " << T;
        return {kFlopsPerPoint * out / (4.0 * in), s.str()};
    }
    case OpbFormula::PlaneTile: {
        double out = double(T - 2) * (T - 2) * Z, in = double(T) * T * (Z + 2);
        s << "13·(T-2)²·Z / (4·T²·(Z+2)), T = " << T << ", Z = " << Z;
        return {kFlopsPerPoint * out / (4.0 * in), s.str()};
    }
    case OpbFormula::Column: {
        s << "13·Z / (4·(3·Z + 2)), Z = " << Z;
        return {kFlopsPerPoint * double(Z) / (4.0 * (3.0 * Z + 2)), s.str()};
    }
    }
    return {0, "unknown"};
}
