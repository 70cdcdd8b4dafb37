// Stage 09 (many GPUs): the ranks of one run on the host (slab/ranks.h): NCCL's errors, the
// watchdog, the group's barrier and reductions in the single-process mode (MPI's otherwise), the
// wait for a stream, NCCL's set-up, and the start of every rank's work (a thread each, or this
// MPI process's one).
#include "slab/ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/cuda_check.h"
#include "common/program.h"
#include "common/record.h"
#include "slab/mpi.h"

// ---------------------------------------------------------------- errors

std::string nccl_text(ncclResult_t e, ncclComm_t comm) {
    std::string text = std::string(ncclGetErrorString(e));
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last) text += "; NCCL says: " + std::string(last);
    return text;
}

void nccl_check(ncclResult_t e, ncclComm_t comm, const char* call) {
    if (e != ncclSuccess) throw NcclError(std::string(call) + " failed: " + nccl_text(e, comm));
}

void slab_check(const SlabStatus& st, ncclComm_t comm) {
    if (st.cuda != cudaSuccess)
        throw CudaError(std::string(st.call) + " failed: " + cudaGetErrorName(st.cuda) + " (" +
                        cudaGetErrorString(st.cuda) + ")");
    if (st.nccl != ncclSuccess) throw NcclError(std::string(st.call) + " failed: " + nccl_text(st.nccl, comm));
}

// ---------------------------------------------------------------- the watchdog

void Watchdog::arm(int rank, double seconds, const std::string& what) {
    std::lock_guard<std::mutex> lock(m_);
    slots_[rank] = {std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(seconds)),
                    what, seconds};
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
}

void Watchdog::disarm(int rank) {
    std::lock_guard<std::mutex> lock(m_);
    slots_.erase(rank);
}

Watchdog::~Watchdog() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
}

void Watchdog::watch() {
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

Watchdog& watchdog() {
    static Watchdog w;
    return w;
}

// ---------------------------------------------------------------- the group of ranks

void Group::check_aborted() const {
    if (shared && shared->aborted) throw GroupAborted("another rank failed");
}

void Group::barrier() {
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

double Group::reduce(double x, bool max) {
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

void Group::fail(std::exception_ptr e) {
    if (!shared) return;
    std::lock_guard<std::mutex> lock(shared->m);
    if (!shared->first_error) shared->first_error = e;
    shared->aborted = true;
    shared->cv.notify_all();
}

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

// ---------------------------------------------------------------- starting the ranks

int open_communicators(bool under_mpi, int my_rank, int ranks, int device, double timeout,
                       std::vector<ncclComm_t>& comms) {
    comms.assign(size_t(under_mpi ? 1 : ranks), nullptr);
    try {
        watchdog().arm(my_rank, timeout, "NCCL's set-up (every rank must join)");
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
    return kPass;
}

CommsCloser::~CommsCloser() {
    for (ncclComm_t x : comms)
        if (x) ncclCommDestroy(x);
}

void run_on_ranks(bool under_mpi, int my_rank, int ranks, int device, const std::vector<ncclComm_t>& comms,
                  const RankWork& work) {
    if (under_mpi) {
        Group g{my_rank, ranks, true, nullptr};
        try {
            work(g, device, comms[0]);
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
                    work(g, r, comms[size_t(r)]);
                } catch (...) {
                    g.fail(std::current_exception());
                }
            });
        for (std::thread& t : threads) t.join();
        if (shared.first_error) std::rethrow_exception(shared.first_error);
    }
}
