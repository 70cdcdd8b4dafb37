#pragma once
// Stage 09 (many GPUs): its options, on top of stage 07's (heat/cli.h) and the common ones, and
// its --help. Plain C++.
#include <string>
#include <vector>

#include "common/cli.h"
#include "heat/cli.h"

struct ManyGpuOptions {
    unsigned gpus = 0;      // --gpus G: G ranks as threads of this process; 0: not given
    bool sampled = false;   // check sampled planes even where the whole grid would fit the host
    double timeout = 120;   // seconds without progress before the exchange counts as hung
    int stall_rank = -1;    // for the tests: this rank never takes part in the exchange
    bool compare_07 = true;
    bool given_n = false;
};

// The largest N whose whole grid rank 0 gathers and checks like stage 07 (and compares with
// stage 07's own run); past it every rank checks sampled planes.
constexpr unsigned kFullCheckMaxN = 520;
// N is limited by the 64-bit offsets only in principle; this keeps a plane's N² cells and the
// grid's y dimension of blocks (N/8 <= 65535) well inside what the kernels handle.
constexpr unsigned kManyGpuMaxN = 65535;

// Fills m, h and o from argv: stage 09's own options first, then the rest (left in `rest`) as
// stage 07's. Returns "" or a message that names the bad argument or combination; the options the
// stage file refuses (heat/runner.h's stage_refuses with kSlabStage) are the caller's to check.
std::string parse_many_gpu_args(int argc, const char* const* argv, ManyGpuOptions& m, HeatOptions& h, Options& o,
                                std::vector<const char*>& rest);
std::string many_gpu_usage(const std::string& program);
