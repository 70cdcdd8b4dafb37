// The program every 3D stage links: parse options, run the stage on the GPU at each size,
// check the result against the CPU reference, time it, and report.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "sweep/checker.h"
#include "common/cli.h"
#include "common/cuda_check.h"
#include "common/program.h"
#include "common/gpu_timing.h"
#include "common/grid.h"
#include "sweep/report.h"
#include "sweep/stage.h"

namespace {

// The output grid sits between two guard zones filled with kGuardByte: a write past either
// end of the grid changes them, which the check reports even without compute-sanitizer.
constexpr unsigned char kGuardByte = 0xA5;
size_t guard_floats(unsigned N) {
    size_t g = std::max<size_t>(size_t(1) << 16, 2 * size_t(N) * N);
    return (g + 63) / 64 * 64;  // keeps the grid 256-byte aligned
}

struct Sizes {
    size_t cells, guard, flush_bytes;
    size_t device_bytes() const { return 4 * (cells + (cells + 2 * guard)) + flush_bytes; }
};

void require_device_memory(unsigned N, const Sizes& z) {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (z.device_bytes() > free_bytes)
        throw MemoryShortage("N = " + std::to_string(N) + " needs " + gigabytes(double(z.device_bytes())) +
                             " of GPU memory (an input and an output grid of " + gigabytes(4.0 * double(z.cells)) +
                             " each, guard zones and a cache-flush buffer), but the GPU has only " +
                             gigabytes(double(free_bytes)) + " free of " + gigabytes(double(total_bytes)));
}

bool guards_intact(const DeviceBuffer& out, const Sizes& z) {
    std::vector<unsigned char> guard(4 * z.guard);
    for (size_t offset : {size_t(0), z.guard + z.cells}) {
        CUDA_CHECK(cudaMemcpy(guard.data(), out.floats() + offset, guard.size(), cudaMemcpyDeviceToHost));
        if (std::any_of(guard.begin(), guard.end(), [](unsigned char b) { return b != kGuardByte; })) return false;
    }
    return true;
}

// splitmix64 of the cell's index: uniform in [0.5, 1.5), as fill_random, but made on the GPU.
__global__ void fill_random_kernel(float* grid, size_t cells, uint64_t seed) {
    for (size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x; x < cells; x += size_t(gridDim.x) * blockDim.x) {
        uint64_t z = seed + (x + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        grid[x] = float(0.5 + double(z >> 11) * 0x1.0p-53);
    }
}

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

// --time-only: the kernel and the copy timed on random input made on the GPU; no host grids and
// no CPU reference, so that large N takes seconds (run the same sizes without it to check them).
RunRecord time_size(const Gpu& g, const Options& o, unsigned N, const Coefficients& c, const Resources& res,
                    const DevicePeak& peak) {
    Sizes z{grid_cells(N), 0, l2_flush_bytes(g)};
    require_device_memory(N, z);
    DeviceBuffer d_in(4 * z.cells), d_out(4 * z.cells), flush(z.flush_bytes);
    fill_random_kernel<<<4 * g.prop.multiProcessorCount, 256>>>(d_in.floats(), z.cells, o.seed * 1000003u + N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(d_out.ptr, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice));  // boundary = input
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    RunRecord r = describe_run(g, N, res, peak);
    r.checked = false;
    r.kernel = time_runs([&] { CUDA_CHECK(launch_stencil(d_in.floats(), d_out.floats(), N, c, s)); }, o, s, flush,
                         z.flush_bytes);
    r.copy = time_runs(
        [&] { CUDA_CHECK(cudaMemcpyAsync(d_out.ptr, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice, s)); }, o, s, flush,
        z.flush_bytes);
    r.timed = true;
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaStreamDestroy(s));
    return r;
}

RunRecord run_size(const Gpu& g, const Options& o, unsigned N, const Coefficients& c, const Resources& res,
                   const DevicePeak& peak) {
    if (o.time_only) return time_size(g, o, N, c, res, peak);
    Sizes z{grid_cells(N), guard_floats(N), o.check_only ? 0 : l2_flush_bytes(g)};
    require_device_memory(N, z);

    std::vector<float> in(z.cells), out(z.cells);
    fill_random(in, o.seed * 1000003u + N);
    poison_output(in.data(), out.data(), N);

    DeviceBuffer d_in(4 * z.cells), d_out(4 * (z.cells + 2 * z.guard));
    float* out_grid = d_out.floats() + z.guard;
    CUDA_CHECK(cudaMemcpy(d_in.ptr, in.data(), 4 * z.cells, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out.ptr, kGuardByte, 4 * (z.cells + 2 * z.guard)));
    CUDA_CHECK(cudaMemcpy(out_grid, out.data(), 4 * z.cells, cudaMemcpyHostToDevice));

    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    CUDA_CHECK(launch_stencil(d_in.floats(), out_grid, N, c, s));
    CUDA_CHECK(cudaStreamSynchronize(s));

    RunRecord r = describe_run(g, N, res, peak);
    CUDA_CHECK(cudaMemcpy(out.data(), out_grid, 4 * z.cells, cudaMemcpyDeviceToHost));
    r.check = check_output(in.data(), out.data(), N, c, kStage.out_tile_dim);
    r.check.guard_violated = !guards_intact(d_out, z);
    std::vector<float> in_after(z.cells);
    CUDA_CHECK(cudaMemcpy(in_after.data(), d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToHost));
    r.check.input_modified = std::memcmp(in_after.data(), in.data(), 4 * z.cells) != 0;

    if (r.check.ok() && !o.check_only) {
        DeviceBuffer flush(z.flush_bytes);
        r.kernel = time_runs([&] { CUDA_CHECK(launch_stencil(d_in.floats(), out_grid, N, c, s)); }, o, s, flush,
                             z.flush_bytes);
        r.copy = time_runs(
            [&] { CUDA_CHECK(cudaMemcpyAsync(out_grid, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice, s)); }, o, s,
            flush, z.flush_bytes);
        r.timed = true;
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    std::string program = argv[0];
    Options o;
    if (std::string err = parse_args(argc, argv, o); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (o.help) {
        std::printf("%s", usage(program).c_str());
        return kPass;
    }
    if (!kStageAttempted) return report_not_attempted(kStage.id);

    JsonLog json(nullptr, fclose);
    if (!open_json_log(o.json_path, program, json)) return kUsage;

    return run_reporting_errors(
        [&]() -> int {
            int status = kPass;
            Gpu g;
            std::string why;
            if (!open_gpu(g, why)) {
                std::printf("%s%s\n", o.as_test ? "SKIP: " : "", why.c_str());
                return o.as_test ? kSkip : kNoGpu;
            }
            Resources res = kernel_resources(g, kStage.kernel, kStage.block, kStage.dynamic_shared_bytes);
            Coefficients c = random_coefficients(o.seed);
            int clock_khz = 0;  // cudaDeviceProp lost clockRate in CUDA 13; the attribute stays
            CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, g.id));
            DevicePeak peak = device_peak(g.prop.multiProcessorCount, clock_khz * 1e-3, g.prop.major, g.prop.minor);
            bool header = false;
            for (unsigned N : o.sizes) {
                RunRecord r = run_size(g, o, N, c, res, peak);
                if (!header) {
                    std::printf("%s%s", report_header(r).c_str(),
                                o.check_only ? "      N  check  max rel err\n" : report_columns().c_str());
                    header = true;
                }
                std::printf("%s", report_row(r).c_str());
                if (r.checked && !r.check.ok()) {
                    std::printf("%s", describe_failure(r.check).c_str());
                    status = kFail;
                }
                if (json) std::fprintf(json.get(), "%s\n", to_json(r).c_str());
                std::fflush(stdout);
            }
            return status;
        },
        o.as_test, program, "checking an N×N×N grid needs about 3 × 4·N³ bytes of RAM");
}
