// Stage 02 - the basic stencil sweep (PMPP Fig. 8.6).
// Lesson: chapters/02_basic_sweep/README.md
#include "sweep/stage.h"

// 32 threads along k, the index that is contiguous in memory, so that each warp reads and
// writes 128 consecutive bytes; 32 × 4 × 2 = 256 threads per block.
constexpr unsigned BLOCK_X = 32, BLOCK_Y = 4, BLOCK_Z = 2;

// One thread per grid cell; threads on the boundary do nothing.
__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 3: the cell (i, j, k) of this thread ----
    unsigned int i = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    // ---- END EXERCISE ----

    // ---- EXERCISE 2 of 3: interior cells only, then the 7-point stencil ----
    if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
        out[i * N * N + j * N + k] = c.c0 * in[i * N * N + j * N + k]
                                   + c.c1 * in[i * N * N + j * N + (k - 1)]
                                   + c.c2 * in[i * N * N + j * N + (k + 1)]
                                   + c.c3 * in[i * N * N + (j - 1) * N + k]
                                   + c.c4 * in[i * N * N + (j + 1) * N + k]
                                   + c.c5 * in[(i - 1) * N * N + j * N + k]
                                   + c.c6 * in[(i + 1) * N * N + j * N + k];
    }
    // ---- END EXERCISE ----
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, BLOCK_Z);
    // ---- EXERCISE 3 of 3: enough blocks to cover all N cells along each axis ----
    dim3 grid(ceil_div(N, BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N, BLOCK_Z));
    // ---- END EXERCISE ----
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "02_basic_sweep", "Basic sweep", "Fig. 8.6", OpbFormula::Basic,
    /*in_tile_dim=*/0, /*out_tile_dim=*/0, /*z_coarsening=*/1,
    reinterpret_cast<const void*>(stencil_kernel), dim3(BLOCK_X, BLOCK_Y, BLOCK_Z), /*dynamic_shared_bytes=*/0,
};
