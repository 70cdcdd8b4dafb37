// Stage 05 - register tiling (PMPP Fig. 8.12).
// Lesson: chapters/05_register_tiling/README.md
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
    if (iStart - 1 >= 0 && iStart - 1 < N && j >= 0 && j < N && k >= 0 && k < N) {
        inPrev = in[(iStart - 1) * N * N + j * N + k];
    }
    if (iStart >= 0 && iStart < N && j >= 0 && j < N && k >= 0 && k < N) {
        inCurr = in[iStart * N * N + j * N + k];
        inCurr_s[threadIdx.y][threadIdx.x] = inCurr;
    }
    // ---- END EXERCISE ----

    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        // ---- EXERCISE 2 of 2: load plane i+1 into inNext, compute plane i, then rotate ----
        if (i + 1 >= 0 && i + 1 < N && j >= 0 && j < N && k >= 0 && k < N) {
            inNext = in[(i + 1) * N * N + j * N + k];
        }
        __syncthreads();  // inCurr_s is complete
        if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
            if (threadIdx.y >= 1 && threadIdx.y < IN_TILE_DIM - 1 &&
                threadIdx.x >= 1 && threadIdx.x < IN_TILE_DIM - 1) {
                out[i * N * N + j * N + k] = c.c0 * inCurr
                                           + c.c1 * inCurr_s[threadIdx.y][threadIdx.x - 1]
                                           + c.c2 * inCurr_s[threadIdx.y][threadIdx.x + 1]
                                           + c.c3 * inCurr_s[threadIdx.y - 1][threadIdx.x]
                                           + c.c4 * inCurr_s[threadIdx.y + 1][threadIdx.x]
                                           + c.c5 * inPrev
                                           + c.c6 * inNext;
            }
        }
        __syncthreads();  // everyone is done reading inCurr_s before it is overwritten
        inPrev = inCurr;
        inCurr = inNext;
        inCurr_s[threadIdx.y][threadIdx.x] = inNext;
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
