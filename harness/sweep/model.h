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

// The compute roof: the FP32 rate the hardware can issue, derived from the device (not measured):
// multiprocessors × FP32 lanes per multiprocessor × 2 FLOP per fused multiply-add × clock.
struct DevicePeak {
    int sm_count = 0;
    double clock_mhz = 0;         // the peak (boost) clock the driver reports
    unsigned fp32_lanes = 0;      // FP32 lanes per multiprocessor; 0 for an architecture not known here
    double fp32_gflops = 0;       // 0 when fp32_lanes is 0
};
// FP32 lanes per multiprocessor for compute capability major.minor: 64 on Volta, Turing and A100
// (7.x, 8.0), 128 on GA10x, Ada, Hopper and Blackwell (8.6-12.x); 0 when not known.
unsigned fp32_lanes_per_sm(int major, int minor);
DevicePeak device_peak(int sm_count, double clock_mhz, int major, int minor);
