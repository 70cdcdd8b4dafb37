// Stage 04 - thread coarsening in z (PMPP Fig. 8.10).
// Lesson: chapters/04_thread_coarsening/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "sweep/stage.h"

// A block of IN_TILE_DIM × IN_TILE_DIM threads walks OUT_TILE_DIM output planes along i,
// keeping three input planes (previous, current, next) in shared memory.
constexpr int IN_TILE_DIM = 32;
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 3: the first output plane of this block, and this thread's (j, k) ----
    // TODO: iStart is this block's first output plane (blocks are OUT_TILE_DIM planes apart);
    // j and k as in stage 03 (an input tile starts one cell before its output tile).
    int iStart = 0;
    int j = 0;
    int k = 0;
    // ---- END EXERCISE ----

    __shared__ float inPrev_s[IN_TILE_DIM][IN_TILE_DIM];
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];
    __shared__ float inNext_s[IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 2 of 3: load planes iStart-1 into inPrev_s and iStart into inCurr_s ----
    // TODO: if plane iStart-1 exists (and j, k are inside the grid), load cell (iStart-1, j, k)
    // into inPrev_s[threadIdx.y][threadIdx.x]; likewise plane iStart into inCurr_s.
    // ---- END EXERCISE ----

    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        // ---- EXERCISE 3 of 3: load plane i+1, compute plane i, then rotate the planes ----
        // TODO, in this order:
        //  1. load cell (i+1, j, k) into inNext_s, if it is inside the grid;
        //  2. a barrier, so that the three planes are complete;
        //  3. interior cells, inner threads (1..IN_TILE_DIM-2 in x and y): the stencil, with the
        //     four x-y neighbours from inCurr_s, i-1 from inPrev_s and i+1 from inNext_s;
        //  4. a barrier, so that no thread still reads a plane that is about to change;
        //  5. rotate: inPrev_s <- inCurr_s, inCurr_s <- inNext_s (each thread moves its own cell).
        // ---- END EXERCISE ----
    }
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(IN_TILE_DIM, IN_TILE_DIM, 1);
    dim3 grid(ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM));
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "04_thread_coarsening", "Thread coarsening", "Fig. 8.10", OpbFormula::PlaneTile,
    /*in_tile_dim=*/IN_TILE_DIM, /*out_tile_dim=*/OUT_TILE_DIM, /*z_coarsening=*/OUT_TILE_DIM,
    reinterpret_cast<const void*>(stencil_kernel), dim3(IN_TILE_DIM, IN_TILE_DIM, 1), /*dynamic_shared_bytes=*/0,
};
