// Stage 05 - register tiling (PMPP Fig. 8.12).
// Lesson: chapters/05_register_tiling/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "sweep/stage.h"

// As stage 04, but only the current plane is shared: each thread keeps its own previous and
// next z-neighbours in registers, since no other thread reads them.
constexpr int IN_TILE_DIM = 32;
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    int iStart = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;

    float inPrev = 0.0f, inCurr = 0.0f, inNext = 0.0f;
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 1 of 2: plane iStart-1 into inPrev; plane iStart into inCurr and inCurr_s ----
    // TODO: as in stage 04, but plane iStart-1 goes into the register inPrev, and plane iStart
    // into the register inCurr and also into inCurr_s, where the neighbours can read it.
    // ---- END EXERCISE ----

    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        // ---- EXERCISE 2 of 2: load plane i+1 into inNext, compute plane i, then rotate ----
        // TODO, as in stage 04 but with registers for the z-neighbours:
        //  1. load cell (i+1, j, k) into inNext, if it is inside the grid;
        //  2. a barrier (inCurr_s is complete);
        //  3. the stencil: the centre from inCurr, x-y neighbours from inCurr_s, i-1 from inPrev,
        //     i+1 from inNext;
        //  4. a barrier (nobody reads inCurr_s any more);
        //  5. rotate the registers (inPrev <- inCurr <- inNext) and store the new inCurr in inCurr_s.
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
    "05_register_tiling", "Register tiling", "Fig. 8.12", OpbFormula::PlaneTile,
    /*in_tile_dim=*/IN_TILE_DIM, /*out_tile_dim=*/OUT_TILE_DIM, /*z_coarsening=*/OUT_TILE_DIM,
    reinterpret_cast<const void*>(stencil_kernel), dim3(IN_TILE_DIM, IN_TILE_DIM, 1), /*dynamic_shared_bytes=*/0,
};
