// Stage 03 - shared-memory tiling (PMPP Fig. 8.8).
// Lesson: chapters/03_shared_tiling/README.md
#include "sweep/stage.h"

// One block per input tile of IN_TILE_DIM³ cells: every thread loads one input cell; the
// threads of the inner OUT_TILE_DIM³ cube also compute one output each.
constexpr int IN_TILE_DIM = 8;
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 4: the input cell (i, j, k) this thread loads ----
    // Output tiles are OUT_TILE_DIM apart; the input tile starts one cell earlier (the halo).
    int i = blockIdx.z * OUT_TILE_DIM + threadIdx.z - 1;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;
    // ---- END EXERCISE ----

    __shared__ float in_s[IN_TILE_DIM][IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 2 of 4: load the input tile into in_s, then wait for the whole block ----
    if (i >= 0 && i < N && j >= 0 && j < N && k >= 0 && k < N) {
        in_s[threadIdx.z][threadIdx.y][threadIdx.x] = in[i * N * N + j * N + k];
    }
    __syncthreads();
    // ---- END EXERCISE ----

    // ---- EXERCISE 3 of 4: interior cells of the grid, inner threads of the tile: the stencil from in_s ----
    if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
        if (threadIdx.z >= 1 && threadIdx.z < IN_TILE_DIM - 1 &&
            threadIdx.y >= 1 && threadIdx.y < IN_TILE_DIM - 1 &&
            threadIdx.x >= 1 && threadIdx.x < IN_TILE_DIM - 1) {
            out[i * N * N + j * N + k] = c.c0 * in_s[threadIdx.z][threadIdx.y][threadIdx.x]
                                       + c.c1 * in_s[threadIdx.z][threadIdx.y][threadIdx.x - 1]
                                       + c.c2 * in_s[threadIdx.z][threadIdx.y][threadIdx.x + 1]
                                       + c.c3 * in_s[threadIdx.z][threadIdx.y - 1][threadIdx.x]
                                       + c.c4 * in_s[threadIdx.z][threadIdx.y + 1][threadIdx.x]
                                       + c.c5 * in_s[threadIdx.z - 1][threadIdx.y][threadIdx.x]
                                       + c.c6 * in_s[threadIdx.z + 1][threadIdx.y][threadIdx.x];
        }
    }
    // ---- END EXERCISE ----
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    // ---- EXERCISE 4 of 4: a block per input tile; the output tiles must cover cells 0..N-2 ----
    dim3 block(IN_TILE_DIM, IN_TILE_DIM, IN_TILE_DIM);
    dim3 grid(ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM));
    // ---- END EXERCISE ----
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "03_shared_tiling", "Shared-memory tiling", "Fig. 8.8", OpbFormula::CubeTile,
    /*in_tile_dim=*/IN_TILE_DIM, /*out_tile_dim=*/OUT_TILE_DIM, /*z_coarsening=*/1,
    reinterpret_cast<const void*>(stencil_kernel), dim3(IN_TILE_DIM, IN_TILE_DIM, IN_TILE_DIM),
    /*dynamic_shared_bytes=*/0,
};
