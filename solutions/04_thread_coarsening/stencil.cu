// Stage 04 - thread coarsening in z (PMPP Fig. 8.10).
// Lesson: chapters/04_thread_coarsening/README.md
#include "sweep/stage.h"

// A block of IN_TILE_DIM × IN_TILE_DIM threads walks OUT_TILE_DIM output planes along i,
// keeping three input planes (previous, current, next) in shared memory.
constexpr int IN_TILE_DIM = 32;
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 3: the first output plane of this block, and this thread's (j, k) ----
    int iStart = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;
    // ---- END EXERCISE ----

    __shared__ float inPrev_s[IN_TILE_DIM][IN_TILE_DIM];
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];
    __shared__ float inNext_s[IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 2 of 3: load planes iStart-1 into inPrev_s and iStart into inCurr_s ----
    if (iStart - 1 >= 0 && iStart - 1 < N && j >= 0 && j < N && k >= 0 && k < N) {
        inPrev_s[threadIdx.y][threadIdx.x] = in[(iStart - 1) * N * N + j * N + k];
    }
    if (iStart >= 0 && iStart < N && j >= 0 && j < N && k >= 0 && k < N) {
        inCurr_s[threadIdx.y][threadIdx.x] = in[iStart * N * N + j * N + k];
    }
    // ---- END EXERCISE ----

    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        // ---- EXERCISE 3 of 3: load plane i+1, compute plane i, then rotate the planes ----
        if (i + 1 >= 0 && i + 1 < N && j >= 0 && j < N && k >= 0 && k < N) {
            inNext_s[threadIdx.y][threadIdx.x] = in[(i + 1) * N * N + j * N + k];
        }
        __syncthreads();  // the three planes are complete
        if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
            if (threadIdx.y >= 1 && threadIdx.y < IN_TILE_DIM - 1 &&
                threadIdx.x >= 1 && threadIdx.x < IN_TILE_DIM - 1) {
                out[i * N * N + j * N + k] = c.c0 * inCurr_s[threadIdx.y][threadIdx.x]
                                           + c.c1 * inCurr_s[threadIdx.y][threadIdx.x - 1]
                                           + c.c2 * inCurr_s[threadIdx.y][threadIdx.x + 1]
                                           + c.c3 * inCurr_s[threadIdx.y - 1][threadIdx.x]
                                           + c.c4 * inCurr_s[threadIdx.y + 1][threadIdx.x]
                                           + c.c5 * inPrev_s[threadIdx.y][threadIdx.x]
                                           + c.c6 * inNext_s[threadIdx.y][threadIdx.x];
            }
        }
        __syncthreads();  // everyone is done reading before the planes move
        inPrev_s[threadIdx.y][threadIdx.x] = inCurr_s[threadIdx.y][threadIdx.x];
        inCurr_s[threadIdx.y][threadIdx.x] = inNext_s[threadIdx.y][threadIdx.x];
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
