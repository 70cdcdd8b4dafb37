// Stage 09 (many GPUs): its runner. Stage 07's step on a slab of planes per GPU (the stage file,
// slab/stage.h), the ghost planes exchanged through NCCL; stage 07's solution is linked beside it,
// and the result is compared with 07's bit for bit. Stage 09 builds on stage 07's runner through
// heat/runner.h (grids to and from the GPU, stage 07's steps) and on 07's options, reference,
// checker and report (heat/cli.h, heat/check.h, heat/report.h).
//
// One run: the options (slab/cli.h) → the ranks, MPI processes or threads (slab/ranks.h), one GPU
// and one NCCL communicator each → for each grid size, every rank's rank_run: set up its slab,
// upload the initial state, step, check (the whole grid on rank 0, or sampled planes on every
// rank), compare with stage 07, time → rank 0's report and JSON record (slab/report.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.h"
#include "common/gpu_timing.h"
#include "common/grid.h"
#include "common/program.h"
#include "heat/check.h"
#include "heat/cli.h"
#include "heat/report.h"
#include "heat/runner.h"
#include "heat/stage.h"
#include "slab/cli.h"
#include "slab/mpi.h"
#include "slab/ranks.h"
#include "slab/report.h"
#include "slab/slab.h"
#include "slab/stage.h"

namespace {

// ---------------------------------------------------------------- a rank's slab on its GPU

HeatStep make_step(const HeatOptions& h, const HeatPlan& plan) { return HeatStep{h.bc, h.precision, plan.r, nullptr}; }

// One rank's buffers, streams and events. The exchange stream has the GPU's highest priority:
// NCCL's send and receive run as a small kernel, and without priority its blocks would wait until
// the interior kernel, which fills every SM many times over, had started its last block; the
// overlap would then be lost.
struct RankState {
    SlabRank r;
    DeviceBuffer a, b;
    size_t buffer_bytes;
    RankState(const SlabRank& sr, size_t bytes) : r(sr), a(bytes), b(bytes), buffer_bytes(bytes) {
        int least_priority = 0, greatest_priority = 0;
        CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
        CUDA_CHECK(cudaStreamCreateWithPriority(&r.compute, cudaStreamNonBlocking, least_priority));
        CUDA_CHECK(cudaStreamCreateWithPriority(&r.exchange, cudaStreamNonBlocking, greatest_priority));
        CUDA_CHECK(cudaEventCreateWithFlags(&r.boundary_done, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&r.ghosts_done, cudaEventDisableTiming));
    }
    ~RankState() {
        cudaStreamDestroy(r.compute);
        cudaStreamDestroy(r.exchange);
        cudaEventDestroy(r.boundary_done);
        cudaEventDestroy(r.ghosts_done);
    }
    RankState(const RankState&) = delete;
    RankState& operator=(const RankState&) = delete;
};

void upload_slab(void* device, unsigned N, const Slab& s, const std::function<std::vector<double>(unsigned)>& plane,
                 Precision p) {
    const size_t plane_bytes = plane_cells(N) * bytes_per_cell(p);
    for (unsigned l = 0; l < s.planes + 2; ++l) {
        std::vector<unsigned char> bytes = encode(plane(s.first - 1 + l), p);
        CUDA_CHECK(cudaMemcpy(static_cast<char*>(device) + l * plane_bytes, bytes.data(), plane_bytes,
                              cudaMemcpyHostToDevice));
    }
}

std::vector<double> download_plane(const void* device, unsigned N, unsigned l, Precision p) {
    const size_t plane_bytes = plane_cells(N) * bytes_per_cell(p);
    std::vector<unsigned char> bytes(plane_bytes);
    CUDA_CHECK(cudaMemcpy(bytes.data(), static_cast<const char*>(device) + l * plane_bytes, plane_bytes,
                          cudaMemcpyDeviceToHost));
    return decode(bytes, p);
}

// Median, min and max over `reps` of the slowest rank's time for `work` (enqueued on compute).
template <class Work>
TimeStats time_ranks(Group& g, RankState& st, const Options& o, double timeout, Work work) {
    for (int w = 0; w < o.warmup; ++w) work();
    wait_stream(st.r.compute, st.r.comm, timeout, g, "the warm-up steps");
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int rep = 0; rep < o.reps; ++rep) {
        g.barrier();
        CUDA_CHECK(cudaEventRecord(start, st.r.compute));
        work();
        CUDA_CHECK(cudaEventRecord(stop, st.r.compute));
        wait_stream(st.r.compute, st.r.comm, timeout, g, "a timed run");
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(float(g.max(ms)));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return summarize(times);
}

// Compares the state cells and face ghosts (all a step reads or writes) of two grids bit for bit:
// the number that differ, and the first one.
size_t count_different(const HostGrid& a, const HostGrid& b, unsigned N, std::string& first) {
    size_t differ = 0;
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                int ghost_axes = (i == 0 || i == N - 1) + (j == 0 || j == N - 1) + (k == 0 || k == N - 1);
                if (ghost_axes > 1) continue;  // edges and corners: never read, they keep their values
                size_t at = grid_index(N, i, j, k);
                if (std::memcmp(&a[at], &b[at], sizeof(double)) == 0) continue;
                if (differ++ == 0) {
                    std::ostringstream s;
                    s.precision(9);
                    s << "(" << i << ", " << j << ", " << k << "): stage 07 " << a[at] << ", stage 09 " << b[at];
                    first = s.str();
                }
            }
    return differ;
}

// Stage 07's solution (linked into this program) on rank 0's GPU, from the same initial state.
HostGrid run_stage07(const HostGrid& initial, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s) {
    const size_t bytes = grid_cells(N) * bytes_per_cell(step.precision);
    DeviceBuffer a(bytes), b(bytes);
    upload(initial, a.ptr, step.precision);
    upload(poisoned(initial, N), b.ptr, step.precision);
    void* result = advance(a.ptr, b.ptr, N, step, steps, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    return download(result, grid_cells(N), step.precision);
}

size_t free_gpu_memory() {
    size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

// ---------------------------------------------------------------- one rank's run, step by step

// What every step of one rank's run at one grid size reads.
struct RankRun {
    Group& g;
    ncclComm_t comm;
    const HeatOptions& h;
    const ManyGpuOptions& m;
    const Options& o;
    unsigned N;
    const HeatPlan& plan;
    Precision p;
    HeatStep step;
    uint64_t seed;  // stage 07's seed for the same N and --seed
    bool full;      // the whole grid gathered and checked on rank 0; else sampled planes on every rank
    // Global plane i of the initial state: the plane of stage 07's random_state for the same seed.
    std::vector<double> initial(unsigned i) const { return initial_plane(N, h.bc, p, seed, i); }
};

// 1. Set up: this rank's place in the decomposition, as the stage's slab_bounds gives it.
SlabRank place_of_rank(const RankRun& c) {
    SlabRank sr;
    sr.N = c.N;
    sr.rank = c.g.rank;
    sr.ranks = c.g.size;
    sr.comm = c.comm;
    sr.slab = slab_bounds(c.N, c.g.rank, c.g.size);
    return sr;
}

// 1. Set up: the stage's slab bounds against the decomposition, for every rank of this run, and for
// other rank counts too (a pure function: checking them costs nothing, and one GPU then tests it).
void check_slab_bounds(const RankRun& c) {
    const unsigned N = c.N;
    std::vector<unsigned> counts = {unsigned(c.g.size)};
    for (unsigned n = 1; n <= std::min(8u, N - 2); ++n) counts.push_back(n);
    if (N > 4) counts.insert(counts.end(), {N - 3, N - 2});
    for (unsigned n : counts)
        for (unsigned q = 0; q < n; ++q)
            if (std::string err = slab_mismatch(N, q, n, slab_bounds(N, int(q), int(n))); !err.empty())
                throw SlabBoundsWrong("the slab bounds are wrong, so no step can be right: " + err);
}

// 1. Set up: every rank must have room for its two slab buffers (and rank 0 for stage 07's grids);
// all ranks agree, so that a shortage is a clean skip everywhere.
void require_slab_memory(const RankRun& c, const Slab& slab, size_t buffer_bytes) {
    const Group& g = c.g;
    double need = 2.0 * double(buffer_bytes);
    if (g.rank == 0 && c.full && c.m.compare_07) need += 2.0 * double(grid_cells(c.N)) * bytes_per_cell(c.p);
    double lacking = double(need > double(free_gpu_memory()));
    if (c.g.max(lacking) > 0)
        throw MemoryShortage("N = " + std::to_string(c.N) + " in " + precision_name(c.p) + " on " +
                             std::to_string(g.size) + " GPU(s) needs " + gigabytes(need) + " on rank " +
                             std::to_string(g.rank) + "'s GPU (two slab buffers of " +
                             std::to_string(slab.planes + 2) + " planes" +
                             (g.rank == 0 && c.full && c.m.compare_07 ? ", and two grids for stage 07's run" : "") +
                             "), more than it has free: use more GPUs, or --no-07-compare");
}

// What the check covers: the steps (all of them, or as many as the CPU reference can afford) and,
// in the sampled mode, the global planes this rank checks.
struct CheckPlan {
    unsigned steps = 0;
    std::vector<unsigned> samples;
};

CheckPlan plan_check(const RankRun& c, const Slab& slab) {
    const unsigned N = c.N;
    CheckPlan cp;
    cp.steps = c.plan.steps;
    if (c.full) {
        if (double(grid_cells(N)) * c.plan.steps > kCheckBudget)
            cp.steps = unsigned(std::max(1.0, kCheckBudget / double(grid_cells(N))));
    } else {
        std::vector<unsigned> mine = {slab.first, slab.first + slab.planes / 2, slab.last()};
        if (c.h.bc != Boundary::Periodic && c.g.rank == 0) mine.insert(mine.begin(), 0);
        if (c.h.bc != Boundary::Periodic && c.g.rank == c.g.size - 1) mine.push_back(N - 1);
        for (unsigned i : mine)
            if (cp.samples.empty() || cp.samples.back() != i) cp.samples.push_back(i);
        auto work = [&](unsigned steps) {
            double w = 0;
            for (unsigned i : cp.samples) w += reference_planes_work(N, c.h.bc, steps, i, i);
            return w;
        };
        while (cp.steps > 1 && work(cp.steps) > kCheckBudget / 4) cp.steps = std::max(1u, cp.steps / 2);
        cp.steps = unsigned(c.g.max(-double(cp.steps)) * -1);  // the fewest any rank can afford: one run for all
    }
    return cp;
}

// 2. Upload: the random initial state into buffer a; into b the same with its state cells NaN, so
// that a cell that no step writes stays NaN.
void upload_initial_state(const RankRun& c, RankState& st) {
    const unsigned N = c.N;
    auto initial = [&](unsigned i) { return c.initial(i); };
    upload_slab(st.a.ptr, N, st.r.slab, initial, c.p);
    upload_slab(st.b.ptr, N, st.r.slab, [&](unsigned i) {
        std::vector<double> u = initial(i);
        if (i >= 1 && i <= N - 2)  // the state cells NaN: a cell that no step writes stays NaN
            for (unsigned j = 1; j + 1 < N; ++j)
                for (unsigned k = 1; k + 1 < N; ++k) u[size_t(j) * N + k] = NAN;
        return u;
    }, c.p);
}

// 3. Step: the tests' stuck rank (--stall-rank) never exchanges, so its neighbours time out.
void stall_if_asked(const RankRun& c) {
    if (c.g.rank != c.m.stall_rank) return;
    std::printf("rank %d: stalling on purpose (--stall-rank)\n", c.g.rank);
    std::fflush(stdout);
    for (;;) {
        c.g.check_aborted();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// 3. Step: the checked steps, every rank at once once all have uploaded, under the watchdog (the
// first exchange is where NCCL connects the ranks). Returns the buffer holding the result.
void* run_checked_steps(const RankRun& c, RankState& st, unsigned checked) {
    c.g.barrier();
    stall_if_asked(c);
    void* result = nullptr;
    watchdog().arm(c.g.rank, c.m.timeout, "the first exchange (NCCL connects the ranks)");
    slab_check(run_slab_steps(st.a.ptr, st.b.ptr, st.r, c.step, checked, &result), c.comm);
    watchdog().disarm(c.g.rank);
    if (result != st.a.ptr && result != st.b.ptr)
        throw CudaError("run_slab_steps returned a result pointer that is neither of the two slab buffers");
    wait_stream(st.r.compute, c.comm, c.m.timeout, c.g, "the checked steps");
    CUDA_CHECK(cudaStreamSynchronize(st.r.exchange));
    return result;
}

// 4. Check (whole grid): gathers the planes into `whole` on rank 0, the domain's ghost planes from
// the first and last rank.
void gather_on_rank0(const RankRun& c, const RankState& st, const void* result, HostGrid& whole) {
    Group& g = c.g;
    const unsigned N = c.N;
    const Slab& slab = st.r.slab;
    if (g.rank == 0) whole.assign(grid_cells(N), 0.0);
    const unsigned lo = g.rank == 0 ? 0 : 1, hi = slab.planes + (g.rank == g.size - 1 ? 1 : 0);
    std::vector<double> mine;
    mine.reserve(size_t(hi - lo + 1) * plane_cells(N));
    for (unsigned l = lo; l <= hi; ++l) {
        std::vector<double> plane = download_plane(result, N, l, c.p);
        mine.insert(mine.end(), plane.begin(), plane.end());
    }
    const size_t offset = size_t(slab.first - 1 + lo) * plane_cells(N);
    if (g.mpi) {
        if (g.rank == 0) {
            std::copy(mine.begin(), mine.end(), whole.begin() + long(offset));
            for (int from = 1; from < g.size; ++from) {
                Slab s = slab_of(N, unsigned(from), unsigned(g.size));
                size_t count = size_t(s.planes + (from == g.size - 1 ? 1 : 0)) * plane_cells(N);
                mpi_receive(whole.data() + size_t(s.first) * plane_cells(N), count * sizeof(double), from, 9);
            }
        } else {
            mpi_send(mine.data(), mine.size() * sizeof(double), 0, 9);
        }
    } else {
        if (g.rank == 0) g.shared->whole = &whole;
        g.barrier();
        std::copy(mine.begin(), mine.end(), g.shared->whole->begin() + long(offset));
        g.barrier();
    }
}

// 4. Check (whole grid, rank 0): against the float64 reference from the same start, as stage 07
// checks it, and the heat that Neumann and periodic boundaries conserve.
void check_whole_grid(const RankRun& c, const HostGrid& start, const HostGrid& whole, unsigned checked,
                      ManyGpuRecord& rec) {
    const unsigned N = c.N;
    ReferenceRun ref = run_reference(start, N, c.h.bc, c.plan.r, nullptr, c.p, checked, grid_cells(N) <= (size_t(1) << 24));
    rec.heat.check = check_heat(whole, ref, N, c.h.bc, c.p);
    if (c.h.bc != Boundary::Dirichlet) {
        rec.heat.conservation.applies = true;
        double before = total_heat(start, N);
        rec.heat.conservation.drift = std::fabs(total_heat(whole, N) - before) / before;
        rec.heat.conservation.tolerance = heat_tolerance(c.p, checked) / 2;
    }
}

// 5. Compare with stage 07 (whole grid, rank 0): stage 07's solution from the same start, on this
// GPU, bit for bit.
void compare_with_stage07(const RankRun& c, const HostGrid& start, const HostGrid& whole, unsigned checked,
                          ManyGpuRecord& rec) {
    if (!c.m.compare_07) {
        rec.compare_note = "not compared (--no-07-compare)";
        return;
    }
    cudaStream_t s07;
    CUDA_CHECK(cudaStreamCreate(&s07));
    HostGrid u07 = run_stage07(start, c.N, c.step, checked, s07);
    CUDA_CHECK(cudaStreamDestroy(s07));
    std::string first;
    size_t differ = count_different(u07, whole, c.N, first);
    rec.equal_to_07 = differ == 0;
    rec.compare_note = differ == 0
        ? "identical, bit for bit, to stage 07's single-GPU solution after " + std::to_string(checked) +
              " step(s) (every state cell and face ghost)"
        : "DIFFERS from stage 07's single-GPU solution in " + std::to_string(differ) +
              " cell(s) after " + std::to_string(checked) + " step(s), first " + first +
              ": the same arithmetic in the same order gives the same bits, so a ghost plane was stale "
              "or a plane was stepped twice";
}

// 4. Check (sampled): every rank checks its sampled planes against the float64 reference of those
// planes; the counts are summed over the ranks. No comparison with stage 07 (nothing is gathered).
void check_sampled_planes(const RankRun& c, const RankState& st, const void* result, const CheckPlan& cp,
                          ManyGpuRecord& rec) {
    Group& g = c.g;
    const unsigned N = c.N;
    const Slab& slab = st.r.slab;
    const unsigned checked = cp.steps;
    HeatCheck check;
    check.steps = checked;
    check.tolerance = heat_tolerance(c.p, checked);
    auto initial = [&](unsigned i) { return c.initial(i); };
    for (unsigned i : cp.samples) {
        std::vector<double> want = reference_planes(N, c.h.bc, c.plan.r, c.p, checked, i, i, initial);
        std::vector<double> got = download_plane(result, N, i - (slab.first - 1), c.p);
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                const int ghost_axes = (i == 0 || i == N - 1) + (j == 0 || j == N - 1) + (k == 0 || k == N - 1);
                if (ghost_axes > 1) continue;
                const size_t at = size_t(j) * N + k;
                double d = std::isnan(got[at]) ? INFINITY : std::fabs(got[at] - want[at]);
                bool bad = c.h.bc == Boundary::Dirichlet && ghost_axes == 1 ? !(got[at] == want[at]) : !(d <= check.tolerance);
                check.max_err = std::max(check.max_err, d);
                if (!bad) continue;
                if (ghost_axes) { ++check.ghosts_wrong; continue; }
                ++check.wrong;
                if (std::isnan(got[at])) ++check.unwritten;
                if (check.first_wrong.size() < kMaxReportedCells)
                    check.first_wrong.push_back({i, j, k, want[at], float(got[at])});
            }
    }
    if (check.wrong || check.ghosts_wrong)
        std::printf("rank %d (planes %u..%u): %zu state cell(s) and %zu ghost(s) wrong in its sampled planes\n%s",
                    g.rank, slab.first, slab.last(), check.wrong, check.ghosts_wrong,
                    describe_heat_failure(check).c_str());
    check.max_err = g.max(check.max_err);
    check.wrong = size_t(g.sum(double(check.wrong)));
    check.ghosts_wrong = size_t(g.sum(double(check.ghosts_wrong)));
    check.unwritten = size_t(g.sum(double(check.unwritten)));
    rec.sampled = true;
    rec.sampled_planes = unsigned(g.sum(double(cp.samples.size())));
    if (check.wrong || check.ghosts_wrong)
        check.hint = "wrong cells in a slab's first or last plane mean a stale or misplaced ghost plane (the "
                     "exchange, or the order of the streams); in the middle of a slab, the step itself";
    rec.compare_note = "not compared: past N = " + std::to_string(kFullCheckMaxN) +
                       " (or with --sampled) the grid is not gathered on one GPU";
    rec.heat.check = check;
}

// 6. Time: one step, the loop with and without the overlap, the exchange alone, a copy.
void time_rank(const RankRun& c, RankState& st, ManyGpuRecord& rec) {
    Group& g = c.g;
    const Options& o = c.o;
    const double timeout = c.m.timeout;
    SlabRank& r = st.r;
    const HeatStep& step = c.step;
    void* res = nullptr;
    rec.heat.step = time_ranks(g, st, o, timeout, [&] { slab_check(slab_step(st.a.ptr, st.b.ptr, r, step), c.comm); });
    if (c.plan.steps > 0) {
        rec.heat.loop = time_ranks(g, st, o, timeout, [&] {
            slab_check(run_slab_steps(st.a.ptr, st.b.ptr, r, step, c.plan.steps, &res), c.comm);
        });
        r.overlap = false;
        rec.loop_serial = time_ranks(g, st, o, timeout, [&] {
            slab_check(run_slab_steps(st.a.ptr, st.b.ptr, r, step, c.plan.steps, &res), c.comm);
        });
        r.overlap = true;
    }
    rec.exchange = time_ranks(g, st, o, timeout, [&] {
        slab_check(exchange_ghost_planes(st.a.ptr, r, step, r.compute), c.comm);
    });
    rec.heat.copy = time_ranks(g, st, o, timeout, [&] {
        CUDA_CHECK(cudaMemcpyAsync(st.b.ptr, st.a.ptr, st.buffer_bytes, cudaMemcpyDeviceToDevice, r.compute));
    });
    rec.heat.timed = true;
    const bool ring = c.h.bc == Boundary::Periodic;
    int neighbours = (g.rank > 0 || ring) + (g.rank < g.size - 1 || ring);
    rec.exchange_bytes = g.max(double(neighbours) * double(plane_cells(c.N)) * bytes_per_cell(c.p));
}

// 7. Report (rank 0): the GPU, the kernel's resources, and which planes each rank has.
void describe_ranks(const RankRun& c, const RankState& st, int device, ManyGpuRecord& rec) {
    const Group& g = c.g;
    const unsigned N = c.N;
    const Slab& slab = st.r.slab;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    Gpu gpu{device, prop};
    std::string where = "rank " + std::to_string(g.rank) + ": planes " + std::to_string(slab.first) + ".." +
                        std::to_string(slab.last()) + " (" + std::to_string(slab.planes) + ") on GPU " +
                        std::to_string(device);
    if (g.rank != 0) return;
    rec.heat.device = prop.name;
    rec.heat.resources = kernel_resources(gpu, slab_kernel_shape(c.p, N).kernel, slab_kernel_shape(c.p, N).block, 0);
    rec.heat.cells_per_thread = slab_kernel_shape(c.p, N).cells_per_thread;
    rec.slabs.push_back(where);
    for (int from = 1; from < g.size; ++from) {
        Slab s = slab_of(N, unsigned(from), unsigned(g.size));
        rec.slabs.push_back("rank " + std::to_string(from) + ": planes " + std::to_string(s.first) + ".." +
                            std::to_string(s.last()) + " (" + std::to_string(s.planes) + ")");
    }
}

// One rank's whole run at one grid size; rank 0 fills `out`.
void rank_run(Group& g, int device, ncclComm_t comm, const HeatOptions& h, const ManyGpuOptions& m, const Options& o,
              unsigned N, const HeatPlan& plan, ManyGpuRecord* out) {
    CUDA_CHECK(cudaSetDevice(device));
    const RankRun c{g, comm, h, m, o, N, plan, h.precision, make_step(h, plan), o.seed * 1000003u + N,
                    !m.sampled && N <= kFullCheckMaxN};
    // 1. Set up: the slab bounds checked, room for the buffers, the buffers and streams.
    const SlabRank sr = place_of_rank(c);
    check_slab_bounds(c);
    const size_t buffer_bytes = slab_buffer_cells(N, sr.slab) * bytes_per_cell(c.p);
    require_slab_memory(c, sr.slab, buffer_bytes);
    RankState st(sr, buffer_bytes);
    const CheckPlan checked = plan_check(c, st.r.slab);
    // 2. Upload the random initial state.
    upload_initial_state(c, st);
    // 3. Step: the checked steps.
    void* result = run_checked_steps(c, st, checked.steps);
    ManyGpuRecord rec;
    if (c.full) {
        // 4. Check the whole grid on rank 0, and 5. compare it with stage 07's.
        HostGrid whole;
        gather_on_rank0(c, st, result, whole);
        if (g.rank == 0) {
            HostGrid start = random_state(N, h.bc, c.p, c.seed);
            check_whole_grid(c, start, whole, checked.steps, rec);
            compare_with_stage07(c, start, whole, checked.steps, rec);
        }
        g.barrier();
    } else {
        // 4. Check the sampled planes on every rank (5. no comparison with stage 07).
        check_sampled_planes(c, st, result, checked, rec);
    }
    // 6. Time, where the check passed.
    if (!o.check_only && rec.heat.check.ok() && (g.rank != 0 || rec.heat.conservation.ok())) time_rank(c, st, rec);
    // 7. Report: rank 0's record.
    describe_ranks(c, st, device, rec);
    if (g.rank == 0) *out = std::move(rec);
}

// ---------------------------------------------------------------- the program

// "" or why this launch cannot run: started by mpirun without MPI built in, or --gpus under mpirun.
std::string launch_problem(const std::string& program, bool under_mpi, const ManyGpuOptions& m) {
    if (under_mpi && !mpi_built())
        return "started by mpirun, but built without MPI: install an MPI (Debian/Ubuntu: apt-get install "
               "libopenmpi-dev) and reconfigure (meson setup --reconfigure build), or run one process for all "
               "GPUs: " + program + " --gpus G";
    if (under_mpi && m.gpus)
        return "--gpus is the single-process mode; under mpirun every process is one rank on one GPU (set the "
               "count with mpirun -np)";
    return "";
}

// The GPU this process's rank takes (under MPI its index among the ranks of its host; else rank r
// takes GPU r): kPass, or the exit code after saying why there is none (one per rank, never two
// ranks on one).
int pick_gpu(bool under_mpi, int my_rank, int ranks, bool speaker, bool as_test, int& device) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::string why = "no CUDA GPU is available (" + std::string(e != cudaSuccess ? cudaGetErrorString(e)
                                                                                        : "the driver reports 0 devices") + ")";
        if (speaker) std::printf("%s%s\n", as_test ? "SKIP: " : "", why.c_str());
        return as_test ? kSkip : kNoGpu;
    }
    device = 0;
    if (under_mpi) {
        int local = 0, local_size = 1;
        try {
            local = mpi_local_rank();
            local_size = mpi_local_size();
        } catch (const MpiError& err) {
            std::printf("rank %d: MPI error: %s\n", my_rank, err.what.c_str());
            mpi_abort(kFail);
        }
        if (local_size > count) {
            if (local == 0)
                std::printf("%smore ranks than GPUs: %d ranks on this host, which has %d GPU(s); each rank needs a "
                            "GPU of its own (mpirun -np %d, or fewer)\n", as_test ? "SKIP: " : "", local_size, count, count);
            return as_test ? kSkip : kNoGpu;
        }
        device = local;
    } else if (ranks > count) {
        std::printf("%smore ranks than GPUs: --gpus %d asks for %d, this machine has %d (a rank needs a GPU of its "
                    "own; NCCL refuses two ranks on one)\n", as_test ? "SKIP: " : "", ranks, ranks, count);
        return as_test ? kSkip : kNoGpu;
    }
    return kPass;
}

// Rank 0's report of one grid size: stage 07's report of the run with stage 09's lines, and its JSON
// record. The exit code for this size.
int report_size(ManyGpuRecord& rec, int ranks, bool under_mpi, const HeatOptions& h, unsigned N, const HeatPlan& plan,
                FILE* json) {
    rec.ranks = ranks;
    rec.launch = under_mpi ? "mpi" : "threads";
    HeatRecord& r = rec.heat;
    r.stage = kSlabStage.id;
    r.title = kSlabStage.title;
    r.implementation = stage_is_solution() ? "solution" : "exercise";
    r.n = N;
    r.bc = h.bc;
    r.precision = h.precision;
    r.plan = plan;
    r.alpha = h.alpha;
    r.analytic_error = NAN;  // stage 07 measures it; stage 09 equals stage 07 bit for bit
    std::string text = heat_report(r);
    text.pop_back();  // the blank line that ends it
    std::printf("%s%s\n", text.c_str(), many_gpu_lines(rec, plan).c_str());
    if (json) std::fprintf(json, "%s\n", to_json(rec, plan).c_str());
    return r.ok() && rec.equal_to_07 != 0 ? kPass : kFail;
}

}  // namespace

int main(int argc, char** argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // point-to-point only: no NVLink multicast buffers
    std::string program = program_name(argv[0]);
    Options o;
    o.sizes = {128};
    HeatOptions h;
    ManyGpuOptions m;
    std::vector<const char*> rest;
    std::string bad = parse_many_gpu_args(argc, argv, m, h, o, rest);
    if (bad.empty()) bad = stage_refuses(h, kSlabStage);
    if (!bad.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), bad.c_str());
        return kUsage;
    }
    if (o.help) {
        std::printf("%s", many_gpu_usage(program).c_str());
        return kPass;
    }

    // The ranks: MPI processes under mpirun, else threads of this process (--gpus G).
    const bool under_mpi = mpi_launched();
    if (std::string err = launch_problem(program, under_mpi, m); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (under_mpi) {
        try {
            mpi_start(argc, argv);
        } catch (const MpiError& e) {
            std::fprintf(stderr, "%s: MPI error: %s\n", program.c_str(), e.what.c_str());
            return kFail;
        }
    }
    struct Finish {
        ~Finish() { mpi_finish(); }
    } finish;
    const int ranks = under_mpi ? mpi_size() : int(m.gpus ? m.gpus : 1);
    const int my_rank = under_mpi ? mpi_rank() : 0;
    const bool speaker = my_rank == 0;  // rank 0 prints the report and writes the JSON
    auto say_error = [&](const char* format, const std::string& text) {
        if (speaker) std::printf(format, text.c_str());
    };

    // The plan of every size, and its decomposition, before anything runs.
    std::vector<HeatPlan> plans(o.sizes.size());
    for (size_t n = 0; n < o.sizes.size(); ++n) {
        if (std::string err = plan_heat_run(h, o.sizes[n], plans[n]); !err.empty()) {
            if (speaker) std::fprintf(stderr, "%s: %s\n", program.c_str(), err.c_str());
            return kUsage;
        }
        if (std::string err = decomposition_problem(o.sizes[n], unsigned(ranks)); !err.empty()) {
            if (speaker) std::fprintf(stderr, "%s: %s\n", program.c_str(), err.c_str());
            return kUsage;
        }
    }
    if (!kStageAttempted) return speaker ? report_not_attempted(kSlabStage.id) : kSkip;

    JsonLog json(nullptr, fclose);
    if (speaker && !open_json_log(o.json_path, program, json)) return kUsage;

    // The GPUs and NCCL: one GPU and one communicator per rank.
    int device = 0;
    if (int code = pick_gpu(under_mpi, my_rank, ranks, speaker, o.as_test, device); code != kPass) return code;
    std::vector<ncclComm_t> comms;
    if (open_communicators(under_mpi, my_rank, ranks, device, m.timeout, comms) != kPass) return kFail;
    CommsCloser close_comms{comms};

    // Each size: every rank's run, then rank 0's report.
    int status = kPass;
    for (size_t n = 0; n < o.sizes.size(); ++n) {
        const unsigned N = o.sizes[n];
        ManyGpuRecord rec;
        int code = run_reporting_errors(
            [&]() -> int {
                try {
                    run_on_ranks(under_mpi, my_rank, ranks, device, comms, [&](Group& g, int gpu, ncclComm_t comm) {
                        rank_run(g, gpu, comm, h, m, o, N, plans[n], &rec);
                    });
                } catch (const NcclError& err) {
                    // NCCL's kernels may still wait for a peer: end here, without the clean-up that would wait too.
                    say_error("NCCL error: %s\n", err.what());
                    std::fflush(stdout);
                    mpi_abort(kFail);
                } catch (const ExchangeTimeout& err) {
                    say_error("TIMEOUT: %s\n", err.what());
                    std::fflush(stdout);
                    mpi_abort(kFail);
                } catch (const SlabBoundsWrong& err) {
                    say_error("FAIL: %s\n", err.what());
                    return kFail;
                } catch (const GroupAborted& err) {
                    say_error("%s\n", err.what());
                    return kFail;
                }
                if (!speaker) return kPass;
                return report_size(rec, ranks, under_mpi, h, N, plans[n], json.get());
            },
            o.as_test, program, "checking an N×N×N grid needs about 6 × 8·N³ bytes of RAM on rank 0 (past N = 520: "
            "the sampled planes only)");
        std::fflush(stdout);
        if (code != kPass) status = code;
        if (code != kPass && code != kFail) break;
    }
    return status;
}
