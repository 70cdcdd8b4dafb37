// Stage 02 - the basic stencil sweep (PMPP Fig. 8.6).
// Lesson: chapters/02_basic_sweep/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "sweep/stage.h"

// 32 threads along k, the index that is contiguous in memory, so that each warp reads and
// writes 128 consecutive bytes; 32 × 4 × 2 = 256 threads per block.
constexpr unsigned BLOCK_X = 32, BLOCK_Y = 4, BLOCK_Z = 2;

// One thread per grid cell; threads on the boundary do nothing.
__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 3: the cell (i, j, k) of this thread ----
    // TODO: compute (i, j, k) from blockIdx, blockDim and threadIdx. Map threadIdx.x to k,
    // the index that is contiguous in memory, z to i and y to j.
    unsigned int i = 0;
    unsigned int j = 0;
    unsigned int k = 0;
    // ---- END EXERCISE ----

    // ---- EXERCISE 2 of 3: interior cells only, then the 7-point stencil ----
    // TODO: if every index of (i, j, k) lies between 1 and N-2, write out[i*N*N + j*N + k]:
    //   c.c0 × the cell itself      + c.c1 × its k-1 neighbour + c.c2 × its k+1 neighbour
    // + c.c3 × its j-1 neighbour    + c.c4 × its j+1 neighbour
    // + c.c5 × its i-1 neighbour    + c.c6 × its i+1 neighbour
    // ---- END EXERCISE ----
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, BLOCK_Z);
    // ---- EXERCISE 3 of 3: enough blocks to cover all N cells along each axis ----
    // TODO: grid.x blocks of BLOCK_X threads must cover N cells (round up: ceil_div in
    // harness/sweep/stage.h), likewise y and z.
    dim3 grid(1, 1, 1);
    // ---- END EXERCISE ----
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "02_basic_sweep", "Basic sweep", "Fig. 8.6", OpbFormula::Basic,
    /*in_tile_dim=*/0, /*out_tile_dim=*/0, /*z_coarsening=*/1,
    reinterpret_cast<const void*>(stencil_kernel), dim3(BLOCK_X, BLOCK_Y, BLOCK_Z), /*dynamic_shared_bytes=*/0,
};
