#include "sweep/model.h"

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

unsigned fp32_lanes_per_sm(int major, int minor) {
    if (major == 7 || (major == 8 && minor == 0)) return 64;
    if ((major == 8 && minor >= 6) || (major >= 9 && major <= 12)) return 128;
    return 0;
}

DevicePeak device_peak(int sm_count, double clock_mhz, int major, int minor) {
    DevicePeak p;
    p.sm_count = sm_count;
    p.clock_mhz = clock_mhz;
    p.fp32_lanes = fp32_lanes_per_sm(major, minor);
    p.fp32_gflops = double(sm_count) * p.fp32_lanes * 2.0 * clock_mhz * 1e-3;
    return p;
}
