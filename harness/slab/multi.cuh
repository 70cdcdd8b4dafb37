// Stage 09 (many GPUs): the multi-GPU layer of the time-stepping runner. heat_main.cu includes
// this file inside its anonymous namespace when it is built with HEAT_MANY_GPUS, so that the
// runs use its helpers (encode, decode, poisoned, advance) and the shared options, reference,
// checker and report. The stage file (heat_slab_stage.h) steps one slab per GPU; stage 07's
// solution is linked beside it, and the result is compared with 07's bit for bit.
//
// Ranks are either MPI processes (mpirun -np R, one GPU each, NCCL's unique id broadcast by MPI)
// or threads of one process (--gpus G, ncclCommInitAll). Both run rank_run() below.

}  // namespace: the headers go outside heat_main.cu's anonymous namespace, the code inside it
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "slab/mpi.h"
#include "slab/slab.h"
#include "slab/stage.h"

namespace {

// ---------------------------------------------------------------- errors and the watchdog

struct NcclError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct ExchangeTimeout : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct SlabBoundsWrong : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct GroupAborted : std::runtime_error {  // another rank failed first
    using std::runtime_error::runtime_error;
};

std::string nccl_text(ncclResult_t e, ncclComm_t comm) {
    std::string text = std::string(ncclGetErrorString(e));
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last) text += "; NCCL says: " + std::string(last);
    return text;
}
void nccl_check(ncclResult_t e, ncclComm_t comm, const char* call) {
    if (e != ncclSuccess) throw NcclError(std::string(call) + " failed: " + nccl_text(e, comm));
}
#define NCCL_CHECK(comm, call) nccl_check((call), (comm), #call)

void slab_check(const SlabStatus& st, ncclComm_t comm) {
    if (st.cuda != cudaSuccess)
        throw CudaError(std::string(st.call) + " failed: " + cudaGetErrorName(st.cuda) + " (" +
                        cudaGetErrorString(st.cuda) + ")");
    if (st.nccl != ncclSuccess) throw NcclError(std::string(st.call) + " failed: " + nccl_text(st.nccl, comm));
}

// Ends the process when a call that blocks the host (NCCL's set-up, its first connection to a
// peer) makes no progress for `seconds`: a rank that never came would otherwise hang the rest.
class Watchdog {
  public:
    void arm(int rank, double seconds, const std::string& what) {
        std::lock_guard<std::mutex> lock(m_);
        slots_[rank] = {std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(seconds)),
                        what, seconds};
        if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    }
    void disarm(int rank) {
        std::lock_guard<std::mutex> lock(m_);
        slots_.erase(rank);
    }
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        if (thread_.joinable()) thread_.join();
    }

  private:
    struct Slot {
        std::chrono::steady_clock::time_point deadline;
        std::string what;
        double seconds;
    };
    void watch() {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            std::lock_guard<std::mutex> lock(m_);
            if (stop_) return;
            for (const auto& [rank, slot] : slots_)
                if (std::chrono::steady_clock::now() > slot.deadline) {
                    std::printf("rank %d: TIMEOUT: %s did not finish within %.0f s (--timeout). A rank is stuck, was "
                                "never started, or died; NCCL cannot tell which. Stopping every rank.\n",
                                rank, slot.what.c_str(), slot.seconds);
                    std::fflush(stdout);
                    mpi_abort(kFail);
                }
        }
    }
    std::mutex m_;
    std::map<int, Slot> slots_;
    std::thread thread_;
    bool stop_ = false;
};
Watchdog& watchdog() {
    static Watchdog w;
    return w;
}

// ---------------------------------------------------------------- the ranks on the host

// What every rank of one run shares in the single-process mode: a barrier, reductions, the
// gathered grid, and the first failure (which stops the others).
struct ThreadShared {
    std::mutex m;
    std::condition_variable cv;
    int ranks = 1, arrived = 0;
    long generation = 0;
    std::vector<double> values;
    HostGrid* whole = nullptr;
    std::atomic<bool> aborted{false};
    std::exception_ptr first_error;
};

// The ranks of a run, as one rank sees them: MPI processes, or threads sharing a ThreadShared.
struct Group {
    int rank = 0, size = 1;
    bool mpi = false;
    ThreadShared* shared = nullptr;

    void check_aborted() const {
        if (shared && shared->aborted) throw GroupAborted("another rank failed");
    }
    void barrier() {
        if (mpi) return mpi_barrier();
        std::unique_lock<std::mutex> lock(shared->m);
        long generation = shared->generation;
        if (++shared->arrived == shared->ranks) {
            shared->arrived = 0;
            ++shared->generation;
            shared->cv.notify_all();
            return;
        }
        shared->cv.wait(lock, [&] { return shared->generation != generation || shared->aborted; });
        if (shared->generation == generation) throw GroupAborted("another rank failed");
    }
    // The reduction of x over all ranks (max or sum), on every rank.
    double reduce(double x, bool max) {
        if (mpi) return max ? mpi_max(x) : mpi_sum(x);
        barrier();
        {
            std::lock_guard<std::mutex> lock(shared->m);
            shared->values[size_t(rank)] = x;
        }
        barrier();
        double y = max ? -INFINITY : 0;
        {
            std::lock_guard<std::mutex> lock(shared->m);
            for (double v : shared->values) y = max ? std::max(y, v) : y + v;
        }
        barrier();
        return y;
    }
    double max(double x) { return reduce(x, true); }
    double sum(double x) { return reduce(x, false); }
    void fail(std::exception_ptr e) {
        if (!shared) return;
        std::lock_guard<std::mutex> lock(shared->m);
        if (!shared->first_error) shared->first_error = e;
        shared->aborted = true;
        shared->cv.notify_all();
    }
};

// ---------------------------------------------------------------- options

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

const std::vector<ProgramOption> kManyGpuOptions = {
    {"--gpus", true}, {"--n", true}, {"--sampled", false}, {"--timeout", true}, {"--stall-rank", true},
    {"--no-07-compare", false},
};

std::string parse_many_gpu_args(int argc, const char* const* argv, ManyGpuOptions& m, HeatOptions& h, Options& o,
                                std::vector<const char*>& rest) {
    std::string err = split_args(argc, argv, kManyGpuOptions,
        [&](const std::string& name, const std::string& value) -> std::string {
            unsigned long long n = 0;
            double x = 0;
            if (name == "--gpus") {
                if (!parse_whole(value, n) || n < 1 || n > 64) return "--gpus expects a GPU count from 1 to 64, got '" + value + "'";
                m.gpus = unsigned(n);
            } else if (name == "--n") {
                m.given_n = true;
                return parse_size_list(value, kManyGpuMaxN, "a plane of N² cells and N/8 blocks along j must stay "
                                       "inside the kernel's grid limits", o.sizes);
            } else if (name == "--sampled") {
                m.sampled = true;
            } else if (name == "--timeout") {
                if (!parse_real(value, x) || x <= 0) return "--timeout expects a positive number of seconds, got '" + value + "'";
                m.timeout = x;
            } else if (name == "--stall-rank") {
                if (!parse_whole(value, n)) return "--stall-rank expects a rank, got '" + value + "'";
                m.stall_rank = int(n);
            } else if (name == "--no-07-compare") {
                m.compare_07 = false;
            }
            return "";
        },
        rest);
    if (!err.empty()) return err;
    std::vector<unsigned> sizes = o.sizes;
    err = parse_heat_args(int(rest.size()), rest.data(), h, o);
    o.sizes = sizes;  // parse_args never saw --n
    if (err.empty() && h.jacobi) err = "--jacobi belongs to stage 07: stage 09 runs the time loop on many GPUs";
    if (err.empty() && h.snapshots) err = "--snapshots belongs to stage 07 (its pictures come from one GPU)";
    if (err.empty()) err = stage_refuses(h, kSlabStage);
    return err;
}

std::string many_gpu_usage(const std::string& program) {
    std::string text = heat_usage(program);
    text = text.substr(0, text.find("  --jacobi"));
    return text +
           "  --n N[,N...]       grid sizes; stage 09 takes N up to 65535 (64-bit offsets) [128]\n"
           "  --gpus G           run G ranks, one GPU each, from this one process (threads, ncclCommInitAll)\n"
           "                     [1]; under mpirun each process is one rank instead (mpirun -np R " + program + ")\n"
           "  --sampled          check sampled planes (every slab's first and last, and the domain's faces)\n"
           "                     against the float64 reference of those planes, instead of the whole grid;\n"
           "                     the default past N = " + std::to_string(kFullCheckMaxN) + "\n"
           "  --timeout S        seconds an exchange or NCCL's set-up may take before the run stops   [120]\n"
           "  --no-07-compare    do not compare the result with stage 07's single-GPU solution\n"
           "  --stall-rank R     (for the tests) rank R never takes part in the exchange\n\n"
           "  --reps R           timed repetitions; the median is reported               [50]\n"
           "  --warmup W         untimed runs before timing                              [5]\n"
           "  --seed S           seed for the random initial state                       [8]\n"
           "  --json FILE        append one JSON record per size to FILE (rank 0)\n"
           "  --check-only       check only, do not time\n"
           "  --as-test          exit 77 (skipped) without a GPU, with too few GPUs, or when the exercise is\n"
           "                     not attempted\n"
           "  --help             this text\n\n"
           "exit codes: 0 passed, 1 wrong result, or a CUDA, NCCL or MPI error, or an exchange that timed out;\n"
           "2 bad arguments (more ranks than planes included); 3 no usable GPU, fewer GPUs than ranks, or not\n"
           "enough memory; 77 skipped (with --as-test) or exercise not attempted\n";
}

// ---------------------------------------------------------------- one rank's run

// What rank 0 reports for one grid size.
struct ManyGpuRecord {
    HeatRecord heat;
    int ranks = 1;
    std::string launch;            // "mpi" or "threads"
    std::vector<std::string> slabs;  // "rank 0: planes 1..63 on GPU 0"
    bool sampled = false;
    unsigned sampled_planes = 0;
    int equal_to_07 = -1;          // 1 identical, 0 differs, -1 not compared
    std::string compare_note;
    TimeStats loop_serial, exchange;
    double exchange_bytes = 0;     // sent by the busiest rank per step
};

HeatStep make_step(const HeatOptions& h, const HeatPlan& plan) { return HeatStep{h.bc, h.precision, plan.r, nullptr}; }

// Waits for stream s, polling: an NCCL error or a wait past the timeout ends it with a message.
void wait_stream(cudaStream_t s, ncclComm_t comm, double timeout, const Group& g, const char* what) {
    auto start = std::chrono::steady_clock::now();
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(comm, ncclCommGetAsyncError(comm, &async));
        if (async != ncclSuccess && async != ncclInProgress)
            throw NcclError(std::string(what) + ": " + nccl_text(async, comm));
        g.check_aborted();
        double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited > timeout)
            throw ExchangeTimeout(std::string(what) + " did not finish within " + fmt("%.0f", timeout) +
                                  " s (--timeout): the ghost-plane exchange is waiting for a rank that does not "
                                  "send or receive (stuck, never started, or died)");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// One rank's buffers, streams and events.
struct RankState {
    SlabRank r;
    DeviceBuffer a, b;
    size_t buffer_bytes;
    RankState(const SlabRank& sr, size_t bytes) : r(sr), a(bytes), b(bytes), buffer_bytes(bytes) {}
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

// One rank's whole run at one grid size; rank 0 fills `out`.
void rank_run(Group& g, int device, ncclComm_t comm, const HeatOptions& h, const ManyGpuOptions& m, const Options& o,
              unsigned N, const HeatPlan& plan, ManyGpuRecord* out) {
    CUDA_CHECK(cudaSetDevice(device));
    const Precision p = h.precision;
    const HeatStep step = make_step(h, plan);
    const uint64_t seed = o.seed * 1000003u + N;  // stage 07's seed for the same N and --seed

    SlabRank sr;
    sr.N = N;
    sr.rank = g.rank;
    sr.ranks = g.size;
    sr.comm = comm;
    sr.slab = slab_bounds(N, g.rank, g.size);
    // The stage's slab bounds against the decomposition: for every rank of this run, and for other
    // rank counts too (a pure function: checking them costs nothing, and one GPU then tests it).
    std::vector<unsigned> counts = {unsigned(g.size)};
    for (unsigned c = 1; c <= std::min(8u, N - 2); ++c) counts.push_back(c);
    if (N > 4) counts.insert(counts.end(), {N - 3, N - 2});
    for (unsigned c : counts)
        for (unsigned q = 0; q < c; ++q)
            if (std::string err = slab_mismatch(N, q, c, slab_bounds(N, int(q), int(c))); !err.empty())
                throw SlabBoundsWrong("the slab bounds are wrong, so no step can be right: " + err);

    const size_t buffer_bytes = slab_buffer_cells(N, sr.slab) * bytes_per_cell(p);
    const bool full = !m.sampled && N <= kFullCheckMaxN;
    {  // every rank must have room for its two slab buffers (and rank 0 for stage 07's grids)
        double need = 2.0 * double(buffer_bytes);
        if (g.rank == 0 && full && m.compare_07) need += 2.0 * double(grid_cells(N)) * bytes_per_cell(p);
        double lacking = double(need > double(free_gpu_memory()));
        if (g.max(lacking) > 0)
            throw MemoryShortage("N = " + std::to_string(N) + " in " + precision_name(p) + " on " +
                                 std::to_string(g.size) + " GPU(s) needs " + gigabytes(need) + " on rank " +
                                 std::to_string(g.rank) + "'s GPU (two slab buffers of " +
                                 std::to_string(sr.slab.planes + 2) + " planes" +
                                 (g.rank == 0 && full && m.compare_07 ? ", and two grids for stage 07's run" : "") +
                                 "), more than it has free: use more GPUs, or --no-07-compare");
    }
    RankState st(sr, buffer_bytes);
    SlabRank& r = st.r;
    // The exchange stream has the GPU's highest priority: NCCL's send and receive run as a small
    // kernel, and without priority its blocks would wait until the interior kernel, which fills
    // every SM many times over, had started its last block; the overlap would then be lost.
    int least_priority = 0, greatest_priority = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
    CUDA_CHECK(cudaStreamCreateWithPriority(&r.compute, cudaStreamNonBlocking, least_priority));
    CUDA_CHECK(cudaStreamCreateWithPriority(&r.exchange, cudaStreamNonBlocking, greatest_priority));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.boundary_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.ghosts_done, cudaEventDisableTiming));
    struct Cleanup {
        SlabRank& r;
        ~Cleanup() {
            cudaStreamDestroy(r.compute);
            cudaStreamDestroy(r.exchange);
            cudaEventDestroy(r.boundary_done);
            cudaEventDestroy(r.ghosts_done);
        }
    } cleanup{r};

    ManyGpuRecord rec;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    Gpu gpu{device, prop};

    // 1. The check: the steps (all of them, or as many as the CPU reference can afford) from random data.
    auto initial = [&](unsigned i) { return initial_plane(N, h.bc, p, seed, i); };
    std::vector<unsigned> samples;  // global planes this rank checks (sampled mode)
    unsigned checked = plan.steps;
    if (full) {
        if (double(grid_cells(N)) * plan.steps > kCheckBudget)
            checked = unsigned(std::max(1.0, kCheckBudget / double(grid_cells(N))));
    } else {
        std::vector<unsigned> mine = {r.slab.first, r.slab.first + r.slab.planes / 2, r.slab.last()};
        if (h.bc != Boundary::Periodic && g.rank == 0) mine.insert(mine.begin(), 0);
        if (h.bc != Boundary::Periodic && g.rank == g.size - 1) mine.push_back(N - 1);
        for (unsigned i : mine)
            if (samples.empty() || samples.back() != i) samples.push_back(i);
        auto work = [&](unsigned steps) {
            double w = 0;
            for (unsigned i : samples) w += reference_planes_work(N, h.bc, steps, i, i);
            return w;
        };
        while (checked > 1 && work(checked) > kCheckBudget / 4) checked = std::max(1u, checked / 2);
        checked = unsigned(g.max(-double(checked)) * -1);  // the fewest any rank can afford: one run for all
    }
    upload_slab(st.a.ptr, N, r.slab, initial, p);
    upload_slab(st.b.ptr, N, r.slab, [&](unsigned i) {
        std::vector<double> u = initial(i);
        if (i >= 1 && i <= N - 2)  // the state cells NaN: a cell that no step writes stays NaN
            for (unsigned j = 1; j + 1 < N; ++j)
                for (unsigned k = 1; k + 1 < N; ++k) u[size_t(j) * N + k] = NAN;
        return u;
    }, p);
    g.barrier();
    if (g.rank == m.stall_rank) {  // the tests' stuck rank: never exchanges, so its neighbours time out
        std::printf("rank %d: stalling on purpose (--stall-rank)\n", g.rank);
        std::fflush(stdout);
        for (;;) {
            g.check_aborted();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    void* result = nullptr;
    watchdog().arm(g.rank, m.timeout, "the first exchange (NCCL connects the ranks)");
    slab_check(run_slab_steps(st.a.ptr, st.b.ptr, r, step, checked, &result), comm);
    watchdog().disarm(g.rank);
    if (result != st.a.ptr && result != st.b.ptr)
        throw CudaError("run_slab_steps returned a result pointer that is neither of the two slab buffers");
    wait_stream(r.compute, comm, m.timeout, g, "the checked steps");
    CUDA_CHECK(cudaStreamSynchronize(r.exchange));

    HeatCheck check;
    if (full) {
        // Gather the planes to rank 0 (the domain's ghost planes from the first and last rank) and
        // check the whole grid there, as stage 07 does.
        HostGrid whole;
        if (g.rank == 0) whole.assign(grid_cells(N), 0.0);
        const unsigned lo = g.rank == 0 ? 0 : 1, hi = r.slab.planes + (g.rank == g.size - 1 ? 1 : 0);
        std::vector<double> mine;
        mine.reserve(size_t(hi - lo + 1) * plane_cells(N));
        for (unsigned l = lo; l <= hi; ++l) {
            std::vector<double> plane = download_plane(result, N, l, p);
            mine.insert(mine.end(), plane.begin(), plane.end());
        }
        const size_t offset = size_t(r.slab.first - 1 + lo) * plane_cells(N);
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
        if (g.rank == 0) {
            HostGrid start = random_state(N, h.bc, p, seed);
            ReferenceRun ref = run_reference(start, N, h.bc, plan.r, nullptr, p, checked, grid_cells(N) <= (size_t(1) << 24));
            check = check_heat(whole, ref, N, h.bc, p);
            if (h.bc != Boundary::Dirichlet) {
                rec.heat.conservation.applies = true;
                double before = total_heat(start, N);
                rec.heat.conservation.drift = std::fabs(total_heat(whole, N) - before) / before;
                rec.heat.conservation.tolerance = heat_tolerance(p, checked) / 2;
            }
            if (m.compare_07) {
                cudaStream_t s07;
                CUDA_CHECK(cudaStreamCreate(&s07));
                HostGrid u07 = run_stage07(start, N, step, checked, s07);
                CUDA_CHECK(cudaStreamDestroy(s07));
                std::string first;
                size_t differ = count_different(u07, whole, N, first);
                rec.equal_to_07 = differ == 0;
                rec.compare_note = differ == 0
                    ? "identical, bit for bit, to stage 07's single-GPU solution after " + std::to_string(checked) +
                          " step(s) (every state cell and face ghost)"
                    : "DIFFERS from stage 07's single-GPU solution in " + std::to_string(differ) +
                          " cell(s) after " + std::to_string(checked) + " step(s), first " + first +
                          ": the same arithmetic in the same order gives the same bits, so a ghost plane was stale "
                          "or a plane was stepped twice";
            } else {
                rec.compare_note = "not compared (--no-07-compare)";
            }
        }
        g.barrier();
    } else {
        // Every rank checks its sampled planes against the float64 reference of those planes.
        check.steps = checked;
        check.tolerance = heat_tolerance(p, checked);
        for (unsigned i : samples) {
            std::vector<double> want = reference_planes(N, h.bc, plan.r, p, checked, i, i, initial);
            std::vector<double> got = download_plane(result, N, i - (r.slab.first - 1), p);
            for (unsigned j = 0; j < N; ++j)
                for (unsigned k = 0; k < N; ++k) {
                    const int ghost_axes = (i == 0 || i == N - 1) + (j == 0 || j == N - 1) + (k == 0 || k == N - 1);
                    if (ghost_axes > 1) continue;
                    const size_t at = size_t(j) * N + k;
                    double d = std::isnan(got[at]) ? INFINITY : std::fabs(got[at] - want[at]);
                    bool bad = h.bc == Boundary::Dirichlet && ghost_axes == 1 ? !(got[at] == want[at]) : !(d <= check.tolerance);
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
                        g.rank, r.slab.first, r.slab.last(), check.wrong, check.ghosts_wrong,
                        describe_heat_failure(check).c_str());
        check.max_err = g.max(check.max_err);
        check.wrong = size_t(g.sum(double(check.wrong)));
        check.ghosts_wrong = size_t(g.sum(double(check.ghosts_wrong)));
        check.unwritten = size_t(g.sum(double(check.unwritten)));
        rec.sampled = true;
        rec.sampled_planes = unsigned(g.sum(double(samples.size())));
        if (check.wrong || check.ghosts_wrong)
            check.hint = "wrong cells in a slab's first or last plane mean a stale or misplaced ghost plane (the "
                         "exchange, or the order of the streams); in the middle of a slab, the step itself";
        rec.compare_note = "not compared: past N = " + std::to_string(kFullCheckMaxN) +
                           " (or with --sampled) the grid is not gathered on one GPU";
    }
    rec.heat.check = check;

    // 2. Timings: one step, the loop with and without the overlap, the exchange alone, a copy.
    if (!o.check_only && rec.heat.check.ok() && (g.rank != 0 || rec.heat.conservation.ok())) {
        void* res = nullptr;
        rec.heat.step = time_ranks(g, st, o, m.timeout, [&] { slab_check(slab_step(st.a.ptr, st.b.ptr, r, step), comm); });
        if (plan.steps > 0) {
            rec.heat.loop = time_ranks(g, st, o, m.timeout, [&] {
                slab_check(run_slab_steps(st.a.ptr, st.b.ptr, r, step, plan.steps, &res), comm);
            });
            r.overlap = false;
            rec.loop_serial = time_ranks(g, st, o, m.timeout, [&] {
                slab_check(run_slab_steps(st.a.ptr, st.b.ptr, r, step, plan.steps, &res), comm);
            });
            r.overlap = true;
        }
        rec.exchange = time_ranks(g, st, o, m.timeout, [&] {
            slab_check(exchange_ghost_planes(st.a.ptr, r, step, r.compute), comm);
        });
        rec.heat.copy = time_ranks(g, st, o, m.timeout, [&] {
            CUDA_CHECK(cudaMemcpyAsync(st.b.ptr, st.a.ptr, buffer_bytes, cudaMemcpyDeviceToDevice, r.compute));
        });
        rec.heat.timed = true;
        const bool ring = h.bc == Boundary::Periodic;
        int neighbours = (g.rank > 0 || ring) + (g.rank < g.size - 1 || ring);
        rec.exchange_bytes = g.max(double(neighbours) * double(plane_cells(N)) * bytes_per_cell(p));
    }
    // Which GPU each rank has, for the report.
    std::string where = "rank " + std::to_string(g.rank) + ": planes " + std::to_string(r.slab.first) + ".." +
                        std::to_string(r.slab.last()) + " (" + std::to_string(r.slab.planes) + ") on GPU " +
                        std::to_string(device);
    if (g.rank == 0) {
        rec.heat.device = prop.name;
        rec.heat.resources = kernel_resources(gpu, slab_kernel_shape(p, N).kernel, slab_kernel_shape(p, N).block, 0);
        rec.heat.cells_per_thread = slab_kernel_shape(p, N).cells_per_thread;
        rec.slabs.push_back(where);
        for (int from = 1; from < g.size; ++from) {
            Slab s = slab_of(N, unsigned(from), unsigned(g.size));
            rec.slabs.push_back("rank " + std::to_string(from) + ": planes " + std::to_string(s.first) + ".." +
                                std::to_string(s.last()) + " (" + std::to_string(s.planes) + ")");
        }
        *out = std::move(rec);
    }
}

// ---------------------------------------------------------------- the report

std::string many_gpu_lines(const ManyGpuRecord& m, const HeatPlan& plan) {
    std::ostringstream s;
    s << "  ranks      " << m.ranks << (m.ranks == 1 ? " rank on 1 GPU" : " ranks, one GPU each") << ", "
      << (m.launch == "mpi" ? "one MPI process per rank (mpirun)" : "threads of one process (--gpus)") << "\n";
    for (const std::string& slab : m.slabs) s << "             " << slab << "\n";
    if (m.ranks == 1)
        s << "             (one rank: no neighbour to exchange with, except itself under periodic boundaries)\n";
    s << "  stage 07   " << m.compare_note << "\n";
    if (m.sampled)
        s << "  sampled    " << m.sampled_planes << " planes checked (every slab's first, middle and last plane, and "
          << "the domain's faces) against the float64 reference of those planes\n";
    if (m.heat.timed && plan.steps > 0) {
        double over = m.heat.loop.median_ms * 1e3 / plan.steps, serial = m.loop_serial.median_ms * 1e3 / plan.steps;
        s << "  overlap    " << fmt("%.2f", over) << " µs/step with the exchange beside the interior, "
          << fmt("%.2f", serial) << " µs/step after it: the overlap saves " << fmt("%.1f%%", 100 * (1 - over / serial))
          << "\n";
    }
    if (m.heat.timed) {
        double gbps = m.exchange.median_ms > 0 ? 2 * m.exchange_bytes / (m.exchange.median_ms * 1e-3) * 1e-9 : 0;
        s << "  exchange   " << fmt("%.0f", m.exchange_bytes) << " bytes sent (and as many received) per step by "
          << "the busiest rank; alone " << fmt("%.1f", m.exchange.median_ms * 1e3) << " µs = " << fmt("%.1f", gbps)
          << " GB/s in and out per GPU\n"
          << "             (no L2 flush between timed runs in stage 09: the copy and the step are timed alike)\n";
    }
    return s.str();
}

std::string to_json(const ManyGpuRecord& m, const HeatPlan& plan) {
    std::string base = to_json(m.heat);
    base.pop_back();  // the closing brace
    std::ostringstream s;
    s << base << ", \"ranks\": " << m.ranks << ", \"launch\": " << json_string(m.launch)
      << ", \"check_mode\": " << json_string(m.sampled ? "sampled" : "full")
      << ", \"equal_to_07\": " << (m.equal_to_07 < 0 ? "null" : m.equal_to_07 ? "true" : "false");
    if (m.heat.timed) {
        s << ", \"exchange_ms\": " << json_stats(m.exchange) << ", \"exchange_bytes\": " << json_number(m.exchange_bytes);
        if (plan.steps > 0)
            s << ", \"loop_no_overlap_ms\": " << json_stats(m.loop_serial)
              << ", \"us_per_step\": " << json_number(m.heat.loop.median_ms * 1e3 / plan.steps)
              << ", \"us_per_step_no_overlap\": " << json_number(m.loop_serial.median_ms * 1e3 / plan.steps);
    }
    s << "}";
    return s.str();
}

// ---------------------------------------------------------------- the program

int many_gpus_main(int argc, char** argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // point-to-point only: no NVLink multicast buffers
    std::string program = argv[0];
    Options o;
    o.sizes = {128};
    HeatOptions h;
    ManyGpuOptions m;
    std::vector<const char*> rest;
    if (std::string err = parse_many_gpu_args(argc, argv, m, h, o, rest); !err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (o.help) {
        std::printf("%s", many_gpu_usage(program).c_str());
        return kPass;
    }
    const bool under_mpi = mpi_launched();
    if (under_mpi && !mpi_built()) {
        std::fprintf(stderr, "%s: started by mpirun, but built without MPI: install an MPI (Debian/Ubuntu: apt-get "
                     "install libopenmpi-dev) and reconfigure (meson setup --reconfigure build), or run one process "
                     "for all GPUs: %s --gpus G\n", program.c_str(), program.c_str());
        return kUsage;
    }
    if (under_mpi && m.gpus) {
        std::fprintf(stderr, "%s: --gpus is the single-process mode; under mpirun every process is one rank on one "
                     "GPU (set the count with mpirun -np)\n", program.c_str());
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

    // The GPUs: one per rank, never two ranks on one.
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::string why = "no CUDA GPU is available (" + std::string(e != cudaSuccess ? cudaGetErrorString(e)
                                                                                        : "the driver reports 0 devices") + ")";
        if (speaker) std::printf("%s%s\n", o.as_test ? "SKIP: " : "", why.c_str());
        return o.as_test ? kSkip : kNoGpu;
    }
    int device = 0;
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
                            "GPU of its own (mpirun -np %d, or fewer)\n", o.as_test ? "SKIP: " : "", local_size, count, count);
            return o.as_test ? kSkip : kNoGpu;
        }
        device = local;
    } else if (ranks > count) {
        std::printf("%smore ranks than GPUs: --gpus %d asks for %d, this machine has %d (a rank needs a GPU of its "
                    "own; NCCL refuses two ranks on one)\n", o.as_test ? "SKIP: " : "", ranks, ranks, count);
        return o.as_test ? kSkip : kNoGpu;
    }

    // NCCL: one communicator per rank.
    std::vector<ncclComm_t> comms(size_t(under_mpi ? 1 : ranks), nullptr);
    try {
        watchdog().arm(my_rank, m.timeout, "NCCL's set-up (every rank must join)");
        if (under_mpi) {
            ncclUniqueId id;
            if (my_rank == 0) NCCL_CHECK(nullptr, ncclGetUniqueId(&id));
            mpi_broadcast(&id, sizeof id, 0);
            CUDA_CHECK(cudaSetDevice(device));
            NCCL_CHECK(nullptr, ncclCommInitRank(&comms[0], ranks, id, my_rank));
        } else {
            std::vector<int> devices(static_cast<size_t>(ranks));
            for (int r = 0; r < ranks; ++r) devices[size_t(r)] = r;
            NCCL_CHECK(nullptr, ncclCommInitAll(comms.data(), ranks, devices.data()));
        }
        watchdog().disarm(my_rank);
    } catch (const std::exception& err) {
        std::printf("rank %d: %s\n", my_rank, err.what());
        if (under_mpi && ranks > 1) mpi_abort(kFail);
        return kFail;
    } catch (const MpiError& err) {
        std::printf("rank %d: MPI error: %s\n", my_rank, err.what.c_str());
        mpi_abort(kFail);
    }
    struct Comms {
        std::vector<ncclComm_t>& c;
        ~Comms() {
            for (ncclComm_t x : c)
                if (x) ncclCommDestroy(x);
        }
    } destroy{comms};

    int status = kPass;
    for (size_t n = 0; n < o.sizes.size(); ++n) {
        const unsigned N = o.sizes[n];
        ManyGpuRecord rec;
        int code = run_reporting_errors(
            [&]() -> int {
                try {
                    if (under_mpi) {
                        Group g{my_rank, ranks, true, nullptr};
                        try {
                            rank_run(g, device, comms[0], h, m, o, N, plans[n], &rec);
                        } catch (const MemoryShortage&) {
                            throw;  // every rank agreed on it: a clean skip
                        } catch (const std::exception& err) {
                            std::printf("rank %d: %s\n", my_rank, err.what());
                            std::fflush(stdout);
                            if (ranks > 1) mpi_abort(kFail);  // the others would wait for this rank forever
                            throw;
                        } catch (const MpiError& err) {
                            std::printf("rank %d: MPI error: %s\n", my_rank, err.what.c_str());
                            mpi_abort(kFail);
                        }
                    } else {
                        ThreadShared shared;
                        shared.ranks = ranks;
                        shared.values.assign(size_t(ranks), 0.0);
                        std::vector<std::thread> threads;
                        for (int r = 0; r < ranks; ++r)
                            threads.emplace_back([&, r] {
                                Group g{r, ranks, false, &shared};
                                try {
                                    rank_run(g, r, comms[size_t(r)], h, m, o, N, plans[n], &rec);
                                } catch (...) {
                                    g.fail(std::current_exception());
                                }
                            });
                        for (std::thread& t : threads) t.join();
                        if (shared.first_error) std::rethrow_exception(shared.first_error);
                    }
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
                rec.ranks = ranks;
                rec.launch = under_mpi ? "mpi" : "threads";
                HeatRecord& r = rec.heat;
                r.stage = kSlabStage.id;
                r.title = kSlabStage.title;
                r.implementation = stage_is_solution() ? "solution" : "exercise";
                r.n = N;
                r.bc = h.bc;
                r.precision = h.precision;
                r.plan = plans[n];
                r.alpha = h.alpha;
                r.analytic_error = NAN;  // stage 07 measures it; stage 09 equals stage 07 bit for bit
                std::string text = heat_report(r);
                text.pop_back();  // the blank line that ends it
                std::printf("%s%s\n", text.c_str(), many_gpu_lines(rec, plans[n]).c_str());
                if (json) std::fprintf(json.get(), "%s\n", to_json(rec, plans[n]).c_str());
                return r.ok() && rec.equal_to_07 != 0 ? kPass : kFail;
            },
            o.as_test, program, "checking an N×N×N grid needs about 6 × 8·N³ bytes of RAM on rank 0 (past N = 520: "
            "the sampled planes only)");
        std::fflush(stdout);
        if (code != kPass) status = code;
        if (code != kPass && code != kFail) break;
    }
    return status;
}
