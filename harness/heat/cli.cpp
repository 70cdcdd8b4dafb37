#include "heat/cli.h"

#include <cmath>

namespace {
const std::vector<ProgramOption> kHeatOptions = {
    {"--bc", true},       {"--precision", true}, {"--steps", true},          {"--t-end", true},
    {"--alpha", true},    {"--dt", true},        {"--allow-unstable", false}, {"--jacobi", false},
    {"--tol", true},      {"--max-iters", true}, {"--residual-every", true},  {"--snapshots", true},
    {"--fuse", true},
};

std::string positive_real(const std::string& name, const std::string& value, double& out) {
    if (!parse_real(value, out) || out <= 0) return name + " expects a positive number, got '" + value + "'";
    return "";
}

std::string whole(const std::string& name, const std::string& value, unsigned long long max,
                  unsigned long long& out) {
    if (!parse_whole(value, out)) return name + " expects a whole number (0 or more), got '" + value + "'";
    if (out > max) return name + " must be at most " + std::to_string(max);
    return "";
}

std::string take(HeatOptions& h, const std::string& name, const std::string& value) {
    h.given_options += name + " ";
    unsigned long long n = 0;
    std::string err;
    if (name == "--bc") {
        if (!parse_boundary(value, h.bc)) return "--bc expects dirichlet, neumann or periodic, got '" + value + "'";
    } else if (name == "--precision") {
        if (!parse_precision(value, h.precision))
            return "--precision expects float, double, half or bf16, got '" + value + "'";
    } else if (name == "--steps") {
        err = whole(name, value, 100000000, n);
        h.steps = unsigned(n);
    } else if (name == "--t-end") {
        err = positive_real(name, value, h.t_end);
    } else if (name == "--alpha") {
        err = positive_real(name, value, h.alpha);
    } else if (name == "--dt") {
        err = positive_real(name, value, h.dt);
    } else if (name == "--allow-unstable") {
        h.allow_unstable = true;
    } else if (name == "--jacobi") {
        h.jacobi = true;
    } else if (name == "--tol") {
        err = positive_real(name, value, h.tol);
        if (err.empty() && h.tol >= 1) err = "--tol is a relative residual and must be below 1, got '" + value + "'";
    } else if (name == "--max-iters") {
        err = whole(name, value, 100000000, n);
        if (err.empty() && n == 0) err = "--max-iters must be at least 1";
        h.max_iters = n;
    } else if (name == "--residual-every") {
        err = whole(name, value, 10000000, n);
        if (err.empty() && n == 0) err = "--residual-every must be at least 1";
        h.residual_every = unsigned(n);
    } else if (name == "--snapshots") {
        err = whole(name, value, 16, n);
        h.snapshots = unsigned(n);
    } else if (name == "--fuse") {
        err = whole(name, value, 64, n);
        if (err.empty() && n == 0) err = "--fuse must be at least 1 (steps per pass)";
        h.fused_steps = unsigned(n);
    }
    return err;
}

// The options that make no sense together, as "a and b exclude each other" messages.
std::string combinations(const HeatOptions& h) {
    if (h.given("--steps") && h.given("--t-end"))
        return "--steps and --t-end exclude each other: give the number of steps, or the end time";
    if (!h.jacobi) {
        for (const char* o : {"--tol", "--max-iters", "--residual-every"})
            if (h.given(o)) return std::string(o) + " belongs to the Jacobi solver: add --jacobi, or leave it out";
        return "";
    }
    if (h.bc != Boundary::Dirichlet)
        return "--jacobi solves the Poisson problem with Dirichlet boundaries (with Neumann or periodic ones its "
               "solution is not unique): leave out --bc " + std::string(boundary_name(h.bc));
    if (h.precision == Precision::Half || h.precision == Precision::BFloat16)
        return "--jacobi needs --precision float or double: " + std::string(precision_name(h.precision)) +
               " storage rounds away the small corrections that Jacobi makes near convergence";
    for (const char* o : {"--steps", "--t-end", "--dt", "--alpha", "--allow-unstable", "--snapshots"})
        if (h.given(o)) return std::string(o) + " belongs to the time loop, not to --jacobi";
    return "";
}
}  // namespace

bool HeatOptions::given(const char* option) const {
    return (" " + given_options).find(" " + std::string(option) + " ") != std::string::npos;
}

std::string parse_heat_args(int argc, const char* const* argv, HeatOptions& h, Options& o) {
    std::vector<const char*> rest;
    std::string err = split_args(argc, argv, kHeatOptions,
                                 [&](const std::string& name, const std::string& value) { return take(h, name, value); },
                                 rest);
    if (err.empty()) err = parse_args(int(rest.size()), rest.data(), o);
    if (err.empty() && o.time_only && h.jacobi) err = "--time-only times the steps; --jacobi runs until the residual is small: choose one";
    if (err.empty() && h.jacobi && !h.given("--precision")) h.precision = Precision::Double;
    if (err.empty()) err = combinations(h);
    return err;
}

std::string plan_heat_run(const HeatOptions& h, unsigned N, HeatPlan& plan) {
    plan.geometry = HeatGeometry{N, h.bc};
    const double hh = plan.geometry.h() * plan.geometry.h();
    plan.dt = h.dt > 0 ? h.dt : hh / (8 * h.alpha);
    plan.steps = h.steps;
    if (h.t_end > 0) {
        plan.steps = unsigned(std::ceil(h.t_end / plan.dt * (1 - 1e-12)));
        if (plan.steps == 0) plan.steps = 1;
        plan.dt = h.t_end / plan.steps;
    }
    plan.r = h.alpha * plan.dt / hh;
    plan.t_end = plan.steps * plan.dt;
    if (h.allow_unstable) return "";
    return stability_message(plan.geometry, h.alpha, plan.dt);
}

std::string heat_usage(const std::string& program) {
    return "usage: " + program + " [options]\n"
           "Solves the heat equation u_t = α∇²u on the unit cube with the explicit 7-point step on the GPU.\n"
           "For each grid size it checks every cell after the steps against a float64 CPU reference (on\n"
           "random data), checks that Neumann and periodic boundaries conserve the heat, measures the error\n"
           "against an analytic solution, and times one step, the loop, and the loop as a CUDA graph.\n\n"
           "  --n N[,N...]       grid sizes: N×N×N cells, the outer layer ghost cells   [128]\n"
           "  --bc B             dirichlet, neumann or periodic                          [dirichlet]\n"
           "  --precision P      storage: float, double, half or bf16 (half and bf16     [float]\n"
           "                     compute in float)\n"
           "  --steps S          time steps                                              [100]\n"
           "  --t-end T          run to time T instead (steps = T/dt, rounded up)\n"
           "  --alpha A          diffusivity α                                           [1]\n"
           "  --dt DT            time step; stable for dt <= h²/(6α)                     [h²/(8α)]\n"
           "  --allow-unstable   accept a dt above the limit, and show the growth\n"
           "  --snapshots K      K pictures of the middle plane i = N/2 during the analytic run, in --json\n"
           "  --fuse S           steps fused per trip through memory (stage 08)          [1]\n\n"
           "  --jacobi           instead: solve ∇²u = f (Dirichlet) by Jacobi iteration, the step at r = 1/6\n"
           "  --tol TOL          Jacobi: stop at this relative residual                  [1e-6]\n"
           "  --max-iters M      Jacobi: give up after M iterations                      [1000000]\n"
           "  --residual-every K Jacobi: check and print the residual every K iterations [about N²/4]\n"
           "                     (--precision defaults to double with --jacobi)\n\n"
           "  --reps R           timed repetitions; the median is reported               [50]\n"
           "  --warmup W         untimed runs before timing                              [5]\n"
           "  --seed S           seed for the random initial state                       [8]\n"
           "  --json FILE        append one JSON record per size to FILE\n"
           "  --check-only       check only, do not time\n"
           "  --time-only        time only, do not check: a random state made on the GPU (for sweeps)\n"
           "  --as-test          exit 77 (skipped) without a GPU or when the exercise is not attempted\n"
           "  --help             this text\n\n"
           "exit codes: 0 passed, 1 wrong result or CUDA error, 2 bad arguments (an unstable dt included),\n"
           "3 no usable GPU or not enough memory, 77 skipped (with --as-test) or exercise not attempted\n";
}
