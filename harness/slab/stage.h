#pragma once
// The interface between the harness and stage 09 (many GPUs): stage 07's step on a slab of planes
// per GPU, the ghost planes exchanged with NCCL. The stage's stencil.cu defines what is declared
// here; the harness (slab/main.cu and slab/ranks.cu) makes the ranks, their
// communicator, streams and events, and checks the result.
#include <cuda_runtime.h>
#include <nccl.h>

#include "slab/slab.h"
#include "heat/stage.h"

// What one rank works with. Its buffers hold planes + 2 planes of N² cells: local plane 0 is the
// ghost plane below (global plane slab.first - 1), 1..planes its own, planes + 1 the ghost above.
struct SlabRank {
    unsigned N = 0;
    int rank = 0, ranks = 1;
    Slab slab;                   // from slab_bounds(N, rank, ranks), checked by the harness
    ncclComm_t comm = nullptr;   // one rank per GPU; ranks in the order of the slabs
    cudaStream_t compute = nullptr, exchange = nullptr;  // two streams on this rank's GPU
    // Two events without timing (cudaEventDisableTiming), for the order between the streams.
    cudaEvent_t boundary_done = nullptr, ghosts_done = nullptr;
    bool overlap = true;         // false: every plane, then the exchange, on one stream (to compare)
};

// A failure inside a step: CUDA's or NCCL's code, and the call that returned it.
struct SlabStatus {
    cudaError_t cuda = cudaSuccess;
    ncclResult_t nccl = ncclSuccess;
    const char* call = "";
    bool ok() const { return cuda == cudaSuccess && nccl == ncclSuccess; }
};

// What a CUDA call, an NCCL call or a step of the stage returned, as a SlabStatus.
inline SlabStatus slab_status(SlabStatus st, const char*) { return st; }
inline SlabStatus slab_status(cudaError_t e, const char* call) {
    SlabStatus st;
    st.cuda = e;
    if (e != cudaSuccess) st.call = call;
    return st;
}
inline SlabStatus slab_status(ncclResult_t e, const char* call) {
    SlabStatus st;
    st.nccl = e;
    if (e != ncclSuccess) st.call = call;
    return st;
}

// SLAB_CHECK(call): when the call fails, the function around it returns the failure.
#define SLAB_CHECK(call)                                                          \
    do {                                                                          \
        if (SlabStatus st_ = slab_status((call), #call); !st_.ok()) return st_; \
    } while (0)

extern const HeatStageInfo kSlabStage;

// The planes rank `rank` of `ranks` owns: the state planes 1..N-2 in contiguous slabs, in rank
// order, the first (N-2) % ranks of them one plane larger (harness/slab/slab.h's slab_of).
Slab slab_bounds(unsigned N, int rank, int ranks);

KernelShape slab_kernel_shape(Precision p, unsigned N);

// Steps local planes [begin, end) of `out` from `in` (both slab buffers) on stream s: the state
// cells, and the face ghosts inside those planes (rows j = 0, N-1 and columns k = 0, N-1).
SlabStatus launch_slab_planes(const void* in, void* out, unsigned N, unsigned begin, unsigned end,
                              const HeatStep& step, cudaStream_t s);

// Sends the rank's first and last planes of u to the neighbours that need them and receives their
// planes into u's ghost planes, on stream s.
SlabStatus exchange_ghost_planes(void* u, const SlabRank& r, const HeatStep& step, cudaStream_t s);

// One step of the slab from `in` into `out`, ghost planes included. When it returns, work on
// r.compute that follows it sees the whole new state.
SlabStatus slab_step(const void* in, void* out, const SlabRank& r, const HeatStep& step);

// `steps` steps from the state in `a` (b: the second buffer); *result: the buffer that holds it.
SlabStatus run_slab_steps(void* a, void* b, const SlabRank& r, const HeatStep& step, unsigned steps, void** result);
