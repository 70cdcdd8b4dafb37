#pragma once
// Stage 09 (many GPUs): the ranks of one run, as the host sees them. Ranks are either MPI
// processes (mpirun -np R, one GPU each, NCCL's unique id broadcast by MPI) or threads of one
// process (--gpus G, ncclCommInitAll); a Group lets one rank's run (slab/main.cu's rank_run) wait
// for, reduce over and stop the others alike in both. Here too: the errors that end a run, NCCL's
// set-up, the wait for a stream that an exchange may hang, and the watchdog over calls that block.
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heat/heat.h"
#include "slab/stage.h"

// ---------------------------------------------------------------- errors

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

// NCCL's text for e, and its last error on comm (which may be null).
std::string nccl_text(ncclResult_t e, ncclComm_t comm);
// Throws NcclError naming the call unless e is ncclSuccess.
void nccl_check(ncclResult_t e, ncclComm_t comm, const char* call);
#define NCCL_CHECK(comm, call) nccl_check((call), (comm), #call)
// Throws CudaError or NcclError for a failed step of the stage (slab/stage.h's SlabStatus).
void slab_check(const SlabStatus& st, ncclComm_t comm);

// ---------------------------------------------------------------- the watchdog

// Ends the process when a call that blocks the host (NCCL's set-up, its first connection to a
// peer) makes no progress for `seconds`: a rank that never came would otherwise hang the rest.
class Watchdog {
  public:
    void arm(int rank, double seconds, const std::string& what);
    void disarm(int rank);
    ~Watchdog();

  private:
    struct Slot {
        std::chrono::steady_clock::time_point deadline;
        std::string what;
        double seconds;
    };
    void watch();
    std::mutex m_;
    std::map<int, Slot> slots_;
    std::thread thread_;
    bool stop_ = false;
};
Watchdog& watchdog();

// ---------------------------------------------------------------- the group of ranks

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

    // Throws GroupAborted once another rank has failed (single-process mode).
    void check_aborted() const;
    void barrier();
    // The reduction of x over all ranks (max or sum), on every rank.
    double reduce(double x, bool max);
    double max(double x) { return reduce(x, true); }
    double sum(double x) { return reduce(x, false); }
    // Records this rank's failure and wakes the others, which then throw GroupAborted.
    void fail(std::exception_ptr e);
};

// Waits for stream s, polling: an NCCL error or a wait past the timeout ends it with a message.
void wait_stream(cudaStream_t s, ncclComm_t comm, double timeout, const Group& g, const char* what);

// ---------------------------------------------------------------- starting the ranks

// NCCL: one communicator per rank (comms holds one under MPI, `ranks` in the single-process
// mode), set up under the watchdog. kPass; or kFail after printing why (under MPI, stopping the
// other ranks), the communicators then left as they are.
int open_communicators(bool under_mpi, int my_rank, int ranks, int device, double timeout,
                       std::vector<ncclComm_t>& comms);
// Destroys the communicators when it goes (made once every one is set up).
struct CommsCloser {
    std::vector<ncclComm_t>& comms;
    ~CommsCloser();
};

// One rank's work: its place in the group, its GPU and its communicator.
using RankWork = std::function<void(Group& g, int device, ncclComm_t comm)>;
// Runs `work` on every rank of this run. Under MPI, this process's one rank: an error is printed
// with the rank and the other ranks are stopped (their exchange would wait for this one forever),
// except MemoryShortage, on which every rank agreed. In the single-process mode, one thread per
// rank on GPU r: the first failure stops the others and is rethrown here.
void run_on_ranks(bool under_mpi, int my_rank, int ranks, int device, const std::vector<ncclComm_t>& comms,
                  const RankWork& work);
