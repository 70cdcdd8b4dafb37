// Stage 06 - beyond the book: one sweep at the memory roofline.
// Lesson: chapters/06_roofline/README.md
#include "stage.h"

// Each thread computes a column of Z_CHUNK cells along i. Its i-1 and i+1 neighbours stay in
// registers as it walks (as in stage 05); the four x-y neighbours are plain loads that the L1
// cache serves, because the neighbouring threads of the block loaded those cells as their own.
// No shared memory, no barriers: nothing stalls a warp but memory itself.
// The #ifndef lets a script try other shapes: nvcc -DBLOCK_Y=8 ...
#ifndef BLOCK_X
#define BLOCK_X 64  // threads along k: each warp reads one 128-byte line
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 4   // threads along j
#endif
#ifndef Z_CHUNK
#define Z_CHUNK 16  // cells along i per thread
#endif

__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
stencil_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 2: this thread's (j, k) and its first cell along i; leave if (j, k) is not interior ----
    unsigned int k = blockIdx.x * BLOCK_X + threadIdx.x;
    unsigned int j = blockIdx.y * BLOCK_Y + threadIdx.y;
    unsigned int iStart = 1 + blockIdx.z * Z_CHUNK;
    if (j < 1 || j > N - 2 || k < 1 || k > N - 2) return;  // no barrier below, so leaving early is safe
    unsigned int iEnd = min(iStart + Z_CHUNK, N - 1);          // one past the last cell, at most N-2
    // ---- END EXERCISE ----

    const unsigned int plane = N * N;  // distance between (i, j, k) and (i+1, j, k)
    unsigned int at = iStart * plane + j * N + k;
    float inPrev = in[at - plane];
    float inCurr = in[at];

    // ---- EXERCISE 2 of 2: walk i from iStart to iEnd-1: load i+1, write out[at], slide the registers ----
#pragma unroll 4
    for (unsigned int i = iStart; i < iEnd; ++i, at += plane) {
        float inNext = in[at + plane];
        out[at] = c.c0 * inCurr
                + c.c1 * in[at - 1] + c.c2 * in[at + 1]
                + c.c3 * in[at - N] + c.c4 * in[at + N]
                + c.c5 * inPrev + c.c6 * inNext;
        inPrev = inCurr;
        inCurr = inNext;
    }
    // ---- END EXERCISE ----
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, 1);
    dim3 grid(ceil_div(N, BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, Z_CHUNK));
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "06_roofline", "Streaming at the roofline", "beyond the book", OpbFormula::Column,
    /*in_tile_dim=*/0, /*out_tile_dim=*/0, /*z_coarsening=*/Z_CHUNK,
    reinterpret_cast<const void*>(stencil_kernel), dim3(BLOCK_X, BLOCK_Y, 1), /*dynamic_shared_bytes=*/0,
};
