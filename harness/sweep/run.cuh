#pragma once
// The GPU side of one checked and timed sweep, shared by the one-sweep programs: sweep/main.cu
// (stages 02-06, the 7-point stencil) and sweep/order_main.cu (stage 10, order R). Each program
// includes it once; what differs between them (the launcher, the poisoning and the check) comes
// in as callables.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/cuda_check.h"
#include "common/gpu_timing.h"
#include "common/grid.h"
#include "common/program.h"
#include "sweep/report.h"

namespace sweep_run {

// The output grid sits between two guard zones filled with kGuardByte: a write past either
// end of the grid changes them, which the check reports even without compute-sanitizer.
constexpr unsigned char kGuardByte = 0xA5;
inline size_t guard_floats(unsigned N) {
    size_t g = std::max<size_t>(size_t(1) << 16, 2 * size_t(N) * N);
    return (g + 63) / 64 * 64;  // keeps the grid 256-byte aligned
}

struct Sizes {
    size_t cells, guard, flush_bytes;
    size_t device_bytes() const { return 4 * (cells + (cells + 2 * guard)) + flush_bytes; }
};

inline void require_device_memory(unsigned N, const Sizes& z) {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (z.device_bytes() > free_bytes)
        throw MemoryShortage("N = " + std::to_string(N) + " needs " + gigabytes(double(z.device_bytes())) +
                             " of GPU memory (an input and an output grid of " + gigabytes(4.0 * double(z.cells)) +
                             " each, guard zones and a cache-flush buffer), but the GPU has only " +
                             gigabytes(double(free_bytes)) + " free of " + gigabytes(double(total_bytes)));
}

inline bool guards_intact(const DeviceBuffer& out, const Sizes& z) {
    std::vector<unsigned char> guard(4 * z.guard);
    for (size_t offset : {size_t(0), z.guard + z.cells}) {
        CUDA_CHECK(cudaMemcpy(guard.data(), out.floats() + offset, guard.size(), cudaMemcpyDeviceToHost));
        if (std::any_of(guard.begin(), guard.end(), [](unsigned char b) { return b != kGuardByte; })) return false;
    }
    return true;
}

// The grid fill_random makes, made on the GPU (random_value of each cell's index).
static __global__ void fill_random_kernel(float* grid, size_t cells, uint64_t seed) {
    for (size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x; x < cells; x += size_t(gridDim.x) * blockDim.x)
        grid[x] = random_value(seed, x);
}

// The compute roof of this GPU (sweep/model.h).
inline DevicePeak gpu_peak(const Gpu& g) {
    int clock_khz = 0;  // cudaDeviceProp lost clockRate in CUDA 13; the attribute stays
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, g.id));
    return device_peak(g.prop.multiProcessorCount, clock_khz * 1e-3, g.prop.major, g.prop.minor);
}

// --time-only: the kernel and the copy timed on random input made on the GPU; no host grids and
// no CPU reference, so that large N takes seconds (run the same sizes without it to check them).
// `r` arrives described (the parts that do not depend on the run); `launch(in, out, s)` sweeps.
template <class Launch>
RunRecord time_size(const Gpu& g, const Options& o, unsigned N, RunRecord r, Launch launch) {
    Sizes z{grid_cells(N), 0, l2_flush_bytes(g)};
    require_device_memory(N, z);
    DeviceBuffer d_in(4 * z.cells), d_out(4 * z.cells), flush(z.flush_bytes);
    fill_random_kernel<<<4 * g.prop.multiProcessorCount, 256>>>(d_in.floats(), z.cells, o.seed * 1000003u + N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(d_out.ptr, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice));  // boundary = input
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    r.checked = false;
    r.kernel = time_runs([&] { launch(d_in.floats(), d_out.floats(), s); }, o, s, flush, z.flush_bytes);
    r.copy = time_runs(
        [&] { CUDA_CHECK(cudaMemcpyAsync(d_out.ptr, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice, s)); }, o, s, flush,
        z.flush_bytes);
    r.timed = true;
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaStreamDestroy(s));
    return r;
}

// One size: random input, the output poisoned (`poison(in, out)`: interior NaN, boundary = in)
// between guard zones, one sweep checked (`check(in, out)` against the CPU reference, then the
// guards and the input), and when it passed, timed against a device-to-device copy.
template <class Launch, class Poison, class Check>
RunRecord run_size(const Gpu& g, const Options& o, unsigned N, RunRecord r, Launch launch, Poison poison, Check check) {
    if (o.time_only) return time_size(g, o, N, r, launch);
    Sizes z{grid_cells(N), guard_floats(N), o.check_only ? 0 : l2_flush_bytes(g)};
    require_device_memory(N, z);

    std::vector<float> in(z.cells), out(z.cells);
    fill_random(in, o.seed * 1000003u + N);
    poison(in.data(), out.data());

    DeviceBuffer d_in(4 * z.cells), d_out(4 * (z.cells + 2 * z.guard));
    float* out_grid = d_out.floats() + z.guard;
    CUDA_CHECK(cudaMemcpy(d_in.ptr, in.data(), 4 * z.cells, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out.ptr, kGuardByte, 4 * (z.cells + 2 * z.guard)));
    CUDA_CHECK(cudaMemcpy(out_grid, out.data(), 4 * z.cells, cudaMemcpyHostToDevice));

    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    launch(d_in.floats(), out_grid, s);
    CUDA_CHECK(cudaStreamSynchronize(s));

    CUDA_CHECK(cudaMemcpy(out.data(), out_grid, 4 * z.cells, cudaMemcpyDeviceToHost));
    r.check = check(in.data(), out.data());
    r.check.guard_violated = !guards_intact(d_out, z);
    std::vector<float> in_after(z.cells);
    CUDA_CHECK(cudaMemcpy(in_after.data(), d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToHost));
    r.check.input_modified = std::memcmp(in_after.data(), in.data(), 4 * z.cells) != 0;

    if (r.check.ok() && !o.check_only) {
        DeviceBuffer flush(z.flush_bytes);
        r.kernel = time_runs([&] { launch(d_in.floats(), out_grid, s); }, o, s, flush, z.flush_bytes);
        r.copy = time_runs(
            [&] { CUDA_CHECK(cudaMemcpyAsync(out_grid, d_in.ptr, 4 * z.cells, cudaMemcpyDeviceToDevice, s)); }, o, s,
            flush, z.flush_bytes);
        r.timed = true;
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    return r;
}

// Prints one record: the report's header first when `header` is false (then sets it), the row,
// the failure's explanation; appends the JSON line. Returns whether it passed (or was not checked).
inline bool print_record(const RunRecord& r, const Options& o, bool& header, FILE* json) {
    if (!header) {
        std::printf("%s%s", report_header(r).c_str(),
                    o.check_only ? "      N  check  max rel err\n" : report_columns().c_str());
        header = true;
    }
    std::printf("%s", report_row(r).c_str());
    bool ok = true;
    if (r.checked && !r.check.ok()) {
        std::printf("%s", describe_failure(r.check).c_str());
        ok = false;
    }
    if (json) std::fprintf(json, "%s\n", to_json(r).c_str());
    std::fflush(stdout);
    return ok;
}

// What follows the parsing of the options in both programs: --help, the not-attempted skip, the
// --json file, the GPU (exit 77 with --as-test, 3 without, when there is none), and the harness's
// exceptions turned into messages and exit codes. `body(gpu, json)` runs the sizes and returns
// the exit code.
template <class Body>
int run_program(const std::string& program, const Options& o, const std::string& help, const char* stage_id,
                Body body) {
    if (o.help) {
        std::printf("%s", help.c_str());
        return kPass;
    }
    if (!kStageAttempted) return report_not_attempted(stage_id);

    JsonLog json(nullptr, fclose);
    if (!open_json_log(o.json_path, program, json)) return kUsage;

    return run_reporting_errors(
        [&]() -> int {
            Gpu g;
            std::string why;
            if (!open_gpu(g, why)) {
                std::printf("%s%s\n", o.as_test ? "SKIP: " : "", why.c_str());
                return o.as_test ? kSkip : kNoGpu;
            }
            return body(g, json.get());
        },
        o.as_test, program, "checking an N×N×N grid needs about 3 × 4·N³ bytes of RAM");
}

}  // namespace sweep_run
