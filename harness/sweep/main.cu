// The program every 3D stage links: parse options, run the stage on the GPU at each size,
// check the result against the CPU reference, time it, and report.
#include <cstdio>
#include <string>

#include "common/cli.h"
#include "common/program.h"
#include "sweep/checker.h"
#include "sweep/report.h"
#include "sweep/run.cuh"
#include "sweep/stage.h"

namespace {

// The parts of a record that do not depend on the run.
RunRecord describe_run(const Gpu& g, unsigned N, const Resources& res, const DevicePeak& peak) {
    RunRecord r;
    r.device = g.prop.name;
    r.stage = kStage.id;
    r.title = kStage.title;
    r.figure = kStage.figure;
    r.implementation = stage_is_solution() ? "solution" : "exercise";
    r.n = N;
    r.model = textbook_opb(kStage.formula, kStage.in_tile_dim, kStage.z_coarsening);
    r.resources = res;
    r.peak = peak;
    r.in_tile_dim = kStage.in_tile_dim;
    r.out_tile_dim = kStage.out_tile_dim;
    r.z_coarsening = kStage.z_coarsening;
    return r;
}

RunRecord run_size(const Gpu& g, const Options& o, unsigned N, const Coefficients& c, const Resources& res,
                   const DevicePeak& peak) {
    return sweep_run::run_size(
        g, o, N, describe_run(g, N, res, peak),
        [&](const float* in, float* out, cudaStream_t s) { CUDA_CHECK(launch_stencil(in, out, N, c, s)); },
        [&](const float* in, float* out) { poison_output(in, out, N); },
        [&](const float* in, const float* out) { return check_output(in, out, N, c, kStage.out_tile_dim); });
}

}  // namespace

int main(int argc, char** argv) {
    std::string program = program_name(argv[0]);
    Options o;
    if (std::string err = parse_args(argc, argv, o); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    return sweep_run::run_program(program, o, usage(program), kStage.id, [&](const Gpu& g, FILE* json) -> int {
        int status = kPass;
        Resources res = kernel_resources(g, kStage.kernel, kStage.block, kStage.dynamic_shared_bytes);
        Coefficients c = random_coefficients(o.seed);
        DevicePeak peak = sweep_run::gpu_peak(g);
        bool header = false;
        for (unsigned N : o.sizes)
            if (!sweep_run::print_record(run_size(g, o, N, c, res, peak), o, header, json)) status = kFail;
        return status;
    });
}
