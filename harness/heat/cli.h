#pragma once
// The options of the time-stepping stages (07 onward), on top of the common ones (cli.h), and
// the plan of one run they give for each grid size.
#include <string>

#include "common/cli.h"
#include "heat/heat.h"

struct HeatOptions {
    Boundary bc = Boundary::Dirichlet;
    Precision precision = Precision::Float;  // double for --jacobi unless given
    unsigned steps = 100;
    double t_end = 0;  // > 0: run to this time instead of --steps
    double alpha = 1;
    double dt = 0;     // 0: h²/(8α), i.e. r = 1/8
    bool allow_unstable = false;
    bool jacobi = false;
    double tol = 1e-6;
    unsigned long long max_iters = 1000000;
    unsigned residual_every = 0;  // 0: about N²/4
    unsigned snapshots = 0;       // middle-plane pictures of the analytic run, in the JSON record
    unsigned fused_steps = 1;     // --fuse S: steps per trip through memory (stage 08)
    bool given(const char* option) const;
    std::string given_options;    // every option seen, space-separated, for the combination checks
};

// Fills h and o from argv (the heat options, then the common ones). Returns "" or a message that
// names the bad argument or the bad combination.
std::string parse_heat_args(int argc, const char* const* argv, HeatOptions& h, Options& o);
std::string heat_usage(const std::string& program);

// One run at one grid size: the geometry, the time step and the number of steps.
struct HeatPlan {
    HeatGeometry geometry;
    double dt = 0, r = 0, t_end = 0;
    unsigned steps = 0;
};
// "" and the plan, or the message that refuses the run (an unstable dt without --allow-unstable).
std::string plan_heat_run(const HeatOptions& h, unsigned N, HeatPlan& plan);
