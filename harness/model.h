#pragma once
// The textbook's operations-per-byte model (PMPP section 8.2-8.4): floating-point operations per
// byte loaded from global memory, counting each load the kernel issues and ignoring caches.
#include <string>

constexpr int kFlopsPerPoint = 13;  // 7 multiplications + 6 additions per output point
constexpr double kOpbBound = kFlopsPerPoint / 4.0;  // every input loaded once: 3.25 OP/B

enum class OpbFormula {
    Basic,      // every output loads its 7 inputs: 13 / (7·4)
    CubeTile,   // a T×T×T input tile per block, (T-2)³ outputs (Fig. 8.8)
    PlaneTile,  // a T×T input plane per step, Z output planes per block (Fig. 8.10, 8.12)
    Column,     // a thread walks Z cells along i, k-neighbours by shuffles: per output its centre
                // (plus 2 planes per chunk of Z) and its j-1, j+1 neighbours
};

struct OpbModel {
    double opb;
    std::string formula;  // the formula with this stage's parameters, e.g. "13·(T-2)³/(4·T³), T = 8"
};

// T is IN_TILE_DIM; Z the output planes per block or thread (z-coarsening), used by PlaneTile
// and Column.
OpbModel textbook_opb(OpbFormula f, unsigned T, unsigned Z);
