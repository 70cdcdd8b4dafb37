// The program every time-stepping stage (07 onward) links. For each grid size: the check
// against the float64 CPU reference on random data, the conservation of heat, the error against
// the analytic solution, and the timings of one step, the loop and the loop as a CUDA graph;
// or, with --jacobi, the Poisson problem solved by Jacobi iteration. The runner's shared part
// (grids to and from the GPU, the stage's steps, the options a stage refuses) is heat/runner.h,
// which stage 09 (slab/) builds on too.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/gpu_timing.h"
#include "common/grid.h"
#include "heat/check.h"
#include "heat/cli.h"
#include "heat/report.h"
#include "heat/runner.h"
#include "heat/stage.h"
#include "heat/cells.cuh"
#include "common/program.h"

namespace {

// ---------------------------------------------------------------- the loop as a CUDA graph

// The loop of `steps` steps recorded once as a CUDA graph: one launch replays them all.
struct CapturedLoop {
    cudaGraphExec_t exec = nullptr;
    void* result = nullptr;
    CapturedLoop(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s) {
        cudaGraph_t graph;
        CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        Status launched = run_steps(a, b, N, step, steps, s, &result);
        CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        CUDA_CHECK(launched);
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    ~CapturedLoop() { cudaGraphExecDestroy(exec); }
    void replay(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(exec, s)); }
};

// ---------------------------------------------------------------- the time loop

// The middle plane i = N/2, state cells only, every `stride`-th cell (at most 64 a side).
std::vector<std::vector<double>> middle_plane(const void* grid, unsigned N, Precision p) {
    size_t plane = size_t(N) * N;
    std::vector<unsigned char> bytes(plane * bytes_per_cell(p));
    const auto* base = static_cast<const unsigned char*>(grid) + size_t(N / 2) * plane * bytes_per_cell(p);
    CUDA_CHECK(cudaMemcpy(bytes.data(), base, bytes.size(), cudaMemcpyDeviceToHost));
    HostGrid cells = decode(bytes, p);
    unsigned stride = std::max(1u, (N - 2 + 63) / 64);
    std::vector<std::vector<double>> rows;
    for (unsigned j = 1; j + 1 < N; j += stride) {
        rows.emplace_back();
        for (unsigned k = 1; k + 1 < N; k += stride) rows.back().push_back(cells[size_t(j) * N + k]);
    }
    return rows;
}

double largest_magnitude(const HostGrid& u) {
    double m = 0;
    for (double v : u) m = std::isnan(v) || std::isnan(m) ? NAN : std::max(m, std::fabs(v));
    return m;
}

// Times one step, the loop, the loop as a graph, and a copy of one grid, from the state in a and b.
void time_steps(HeatRecord& rec, void* a, void* b, unsigned N, const HeatStep& step, const HeatPlan& plan,
                const Options& o, const Gpu& g, cudaStream_t s) {
    const size_t bytes = grid_cells(N) * bytes_per_cell(step.precision), flush_bytes = l2_flush_bytes(g);
    DeviceBuffer flush(flush_bytes);
    rec.step = time_runs([&] { CUDA_CHECK(launch_heat_step(a, b, N, step, s)); }, o, s, flush, flush_bytes);
    if (plan.steps > 0) {
        rec.loop = time_runs([&] { advance(a, b, N, step, plan.steps, s); }, o, s, flush, flush_bytes);
        CapturedLoop graph(a, b, N, step, plan.steps, s);
        rec.graph = time_runs([&] { graph.replay(s); }, o, s, flush, flush_bytes);
    }
    rec.copy = time_runs([&] { CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }, o, s, flush,
                         flush_bytes);
    rec.timed = true;
}

HeatRecord run_heat(const Gpu& g, const HeatOptions& h, const Options& o, unsigned N, const HeatPlan& plan,
                    cudaStream_t s) {
    const Precision p = h.precision;
    const size_t cells = grid_cells(N), bytes = cells * bytes_per_cell(p);
    const size_t flush_bytes = o.check_only ? 0 : l2_flush_bytes(g);
    require_memory(N, 2, p, flush_bytes);
    DeviceBuffer a(bytes), b(bytes);
    const HeatStep step{h.bc, p, plan.r, nullptr, h.fused_steps};

    HeatRecord rec;
    rec.device = g.prop.name;
    rec.stage = kHeatStage.id;
    rec.title = kHeatStage.title;
    rec.implementation = stage_is_solution() ? "solution" : "exercise";
    rec.n = N;
    rec.bc = h.bc;
    rec.precision = p;
    rec.plan = plan;
    rec.alpha = h.alpha;
    rec.fused_steps = step.fused_steps;
    KernelShape shape = heat_kernel_shape(step, N);
    rec.cells_per_thread = shape.cells_per_thread;
    rec.tile_j = shape.tile_j;
    rec.tile_k = shape.tile_k;
    if (shape.tile_j > 0)
        rec.model_bytes_per_update = fused_bytes_per_update(
            FusedTile{shape.read_j, shape.read_k, shape.tile_j, shape.tile_k, shape.tile_i}, step.fused_steps,
            bytes_per_cell(p));
    rec.resources = kernel_resources(g, shape.kernel, shape.block, shape.shared_bytes);

    // --time-only (sweeps): a random state made on the GPU, timed without the host's reference.
    if (o.time_only) {
        fill_random_on_gpu(a.ptr, cells, p, o.seed * 1000003u + N, 4 * g.prop.multiProcessorCount, s);
        CUDA_CHECK(cudaMemcpy(b.ptr, a.ptr, bytes, cudaMemcpyDeviceToDevice));
        rec.checked = false;
        time_steps(rec, a.ptr, b.ptr, N, step, plan, o, g, s);
        return rec;
    }

    // 1. Every cell after the steps (or the first steps, for large runs) against the reference.
    unsigned checked = plan.steps;
    if (double(cells) * plan.steps > kCheckBudget) checked = unsigned(std::max(1.0, kCheckBudget / double(cells)));
    HostGrid initial = random_state(N, h.bc, p, o.seed * 1000003u + N);
    upload(initial, a.ptr, p);
    upload(poisoned(initial, N), b.ptr, p);
    HostGrid got = download(advance(a.ptr, b.ptr, N, step, checked, s), cells, p);
    ReferenceRun ref = run_reference(initial, N, h.bc, plan.r, nullptr, p, checked, cells <= (size_t(1) << 24));
    rec.check = check_heat(got, ref, N, h.bc, p, shape.tile_j, shape.tile_k, shape.tile_i, shape.tiles_start_k);
    if (h.bc != Boundary::Dirichlet) {
        rec.conservation.applies = true;
        double before = total_heat(initial, N);
        rec.conservation.drift = std::fabs(total_heat(got, N) - before) / before;
        rec.conservation.tolerance = heat_tolerance(p, checked) / 2;  // a few roundings of each cell per step
    }

    // 2. With an unstable dt, how the largest value grows (from the random state).
    if (plan.r > 1.0 / 6 && cells <= (size_t(1) << 24)) {
        upload(initial, a.ptr, p);
        upload(initial, b.ptr, p);
        void *from = a.ptr, *other = b.ptr;
        unsigned done = 0, chunk = std::max(1u, plan.steps / 10);
        rec.growth.push_back({0, largest_magnitude(initial)});
        while (done < plan.steps) {
            unsigned n = std::min(chunk, plan.steps - done);
            void* result = advance(from, other, N, step, n, s);
            other = result == a.ptr ? b.ptr : a.ptr;
            from = result;
            done += n;
            rec.growth.push_back({done, largest_magnitude(download(from, cells, p))});
        }
    }

    // 3. The analytic solution: start from it at t = 0, compare at the end time.
    upload(exact_state(plan.geometry, h.alpha, 0, p), a.ptr, p);
    CUDA_CHECK(cudaMemcpy(b.ptr, a.ptr, bytes, cudaMemcpyDeviceToDevice));
    {
        void *from = a.ptr, *other = b.ptr;
        unsigned pictures = std::min(h.snapshots, plan.steps + 1), done = 0;
        for (unsigned picture = 0; picture < pictures; ++picture) {
            unsigned at_step = pictures == 1 ? plan.steps : unsigned(double(plan.steps) * picture / (pictures - 1));
            void* result = advance(from, other, N, step, at_step - done, s);
            other = result == a.ptr ? b.ptr : a.ptr;
            from = result;
            done = at_step;
            rec.snapshots.push_back({at_step, at_step * plan.dt, middle_plane(from, N, p)});
        }
        from = advance(from, other, N, step, plan.steps - done, s);
        rec.analytic_error = error_against_exact(download(from, cells, p), plan.geometry, h.alpha, plan.t_end);
    }

    // 4. Timings: one step, the loop, the loop as a graph, and a copy of one grid.
    if (rec.ok() && !o.check_only) {
        upload(initial, a.ptr, p);
        upload(initial, b.ptr, p);
        time_steps(rec, a.ptr, b.ptr, N, step, plan, o, g, s);
    }
    return rec;
}

// ---------------------------------------------------------------- Jacobi

// sums[0] += (6q + sum of neighbours - 6u)² and sums[1] += (6q)² over the state cells: the
// squared residual of ∇²u = f and of f, both times (h²)², since q = -h²f/6.
template <class T>
__global__ void residual_sums(const T* __restrict__ u, const T* __restrict__ q, unsigned int N, double* sums) {
    __shared__ double part[2][256];
    double r2 = 0, f2 = 0;
    const unsigned int state = (N - 2) * (N - 2) * (N - 2), plane = N * N;
    for (unsigned int c = blockIdx.x * blockDim.x + threadIdx.x; c < state; c += gridDim.x * blockDim.x) {
        unsigned int i = 1 + c / ((N - 2) * (N - 2)), j = 1 + c / (N - 2) % (N - 2), k = 1 + c % (N - 2);
        unsigned int at = i * plane + j * N + k;
        double f = 6.0 * to_arith(q[at]);
        double lap = double(to_arith(u[at - 1])) + to_arith(u[at + 1]) + to_arith(u[at - N]) + to_arith(u[at + N]) +
                     to_arith(u[at - plane]) + to_arith(u[at + plane]) - 6.0 * to_arith(u[at]);
        r2 += (f + lap) * (f + lap);
        f2 += f * f;
    }
    part[0][threadIdx.x] = r2;
    part[1][threadIdx.x] = f2;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            part[0][threadIdx.x] += part[0][threadIdx.x + half];
            part[1][threadIdx.x] += part[1][threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&sums[0], part[0][0]);
        atomicAdd(&sums[1], part[1][0]);
    }
}

double relative_residual(const void* u, const void* q, unsigned N, Precision p, double* sums, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * sizeof(double), s));
    with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        residual_sums<T><<<1024, 256, 0, s>>>(static_cast<const T*>(u), static_cast<const T*>(q), N, sums);
        return 0;
    });
    CUDA_CHECK(cudaGetLastError());
    double host[2];
    CUDA_CHECK(cudaMemcpyAsync(host, sums, sizeof host, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return std::sqrt(host[0] / host[1]);
}

// ∇²u = f on the unit cube, u = 0 on its faces, f = -3π²·sin(πx)sin(πy)sin(πz), whose solution
// is sin(πx)sin(πy)sin(πz). Jacobi: u' = (sum of the six neighbours - h²f)/6, i.e. the heat step at
// r = 1/6 with the source -h²f/6.
JacobiRecord run_jacobi(const Gpu& g, const HeatOptions& h, unsigned N, cudaStream_t s) {
    const Precision p = h.precision;
    const HeatGeometry geo{N, Boundary::Dirichlet};
    const size_t cells = grid_cells(N), bytes = cells * bytes_per_cell(p);
    require_memory(N, 3, p, 0);
    DeviceBuffer a(bytes), b(bytes), q(bytes), sums(2 * sizeof(double));
    const double pi = 3.14159265358979323846, hh = geo.h() * geo.h();

    HostGrid source(cells, 0.0), zero(cells, 0.0);
    for (unsigned i = 1; i + 1 < N; ++i)
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k)
                source[grid_index(N, i, j, k)] =
                    round_to(p, pi * pi * hh / 2 * poisson_solution(geo, i, j, k));
    upload(source, q.ptr, p);
    upload(zero, a.ptr, p);
    upload(zero, b.ptr, p);
    const HeatStep step{Boundary::Dirichlet, p, 1.0 / 6, q.ptr, h.fused_steps};

    JacobiRecord rec;
    rec.device = g.prop.name;
    rec.stage = kHeatStage.id;
    rec.implementation = stage_is_solution() ? "solution" : "exercise";
    rec.n = N;
    rec.precision = p;
    rec.tol = h.tol;
    rec.predicted_iterations = std::log(h.tol) / std::log(std::cos(pi * geo.h()));
    // A multiple of 2S per graph: an even number of passes, so that every replay starts from and
    // ends in grid a.
    unsigned every = h.residual_every ? h.residual_every : std::max(10u, (N * N / 4 + 5) / 10 * 10);
    const unsigned pair = 2 * h.fused_steps;
    every = (every + pair - 1) / pair * pair;
    rec.every = every;
    CapturedLoop chunk(a.ptr, b.ptr, N, step, every, s);
    if (chunk.result != a.ptr) throw CudaError("the loop of an even number of steps must end in its first grid");

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start, s));
    double residual = 1;
    while (rec.iterations < h.max_iters) {
        chunk.replay(s);
        rec.iterations += every;
        residual = relative_residual(a.ptr, q.ptr, N, p, static_cast<double*>(sums.ptr), s);
        rec.history.push_back({rec.iterations, residual});
        std::printf("  iteration %9llu   relative residual %.3e\n", rec.iterations, residual);
        if (!(residual > h.tol)) break;
        // Stalled: the last ten checks gained less than 1% together (rounding sets a floor).
        size_t n = rec.history.size();
        if (n > 10 && residual > 0.99 * rec.history[n - 11].second) {
            rec.stalled = true;
            break;
        }
    }
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    rec.time_ms = ms;
    rec.residual = residual;
    rec.converged = residual <= h.tol;
    HostGrid u = download(a.ptr, cells, p);
    rec.error = max_relative_error(u, N, [&](unsigned i, unsigned j, unsigned k) { return poisson_solution(geo, i, j, k); });
    return rec;
}

}  // namespace

int main(int argc, char** argv) {
    std::string program = program_name(argv[0]);
    Options o;
    o.sizes = {128};
    HeatOptions h;
    if (std::string err = parse_heat_args(argc, argv, h, o); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (o.help) {
        std::printf("%s", heat_usage(program).c_str());
        return kPass;
    }
    // The time step must be stable at every size before anything runs.
    std::vector<HeatPlan> plans(o.sizes.size());
    for (size_t n = 0; n < o.sizes.size() && !h.jacobi; ++n)
        if (std::string err = plan_heat_run(h, o.sizes[n], plans[n]); !err.empty()) {
            std::fprintf(stderr, "%s: %s\n", program.c_str(), err.c_str());
            return kUsage;
        }
    if (std::string err = stage_refuses(h, kHeatStage); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (!kStageAttempted) return report_not_attempted(kHeatStage.id);

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
            cudaStream_t s;
            CUDA_CHECK(cudaStreamCreate(&s));
            int status = kPass;
            for (size_t n = 0; n < o.sizes.size(); ++n) {
                if (h.jacobi) {
                    std::printf("%s", jacobi_header(g.prop.name, kHeatStage.id, o.sizes[n], h).c_str());
                    JacobiRecord r = run_jacobi(g, h, o.sizes[n], s);
                    std::printf("%s", jacobi_summary(r).c_str());
                    if (json) std::fprintf(json.get(), "%s\n", to_json(r).c_str());
                    if (!r.converged) status = kFail;
                } else {
                    HeatRecord r = run_heat(g, h, o, o.sizes[n], plans[n], s);
                    std::printf("%s", heat_report(r).c_str());
                    if (json) std::fprintf(json.get(), "%s\n", to_json(r).c_str());
                    if (!r.ok()) status = kFail;
                }
                std::fflush(stdout);
            }
            CUDA_CHECK(cudaStreamDestroy(s));
            return status;
        },
        o.as_test, program, "checking an N×N×N grid needs about 6 × 8·N³ bytes of RAM");
}
