// Stage 06 - beyond the book: one sweep at the memory roofline.
// Lesson: chapters/06_roofline/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "stage.h"

// Each thread owns four neighbouring cells along k and walks Z_CHUNK planes along i. Its i-1
// and i+1 values stay in registers (as in stage 05); every load is 16 bytes wide (a float4),
// and the k-1/k+1 neighbours come from the next lanes' registers through warp shuffles. There
// is no shared memory and no barrier: nothing holds a warp back but memory itself.
// (plots/roofline_steps.py tries other values with nvcc -DTRY_BLOCK_X=... and so on.)
#ifndef TRY_BLOCK_X
#define TRY_BLOCK_X 32
#define TRY_BLOCK_Y 8
#define TRY_Z_CHUNK 4
#endif
constexpr unsigned BLOCK_X = TRY_BLOCK_X;  // threads along k: a warp covers 128 cells = 512 contiguous bytes
constexpr unsigned BLOCK_Y = TRY_BLOCK_Y;  // rows (j) per block
constexpr unsigned Z_CHUNK = TRY_Z_CHUNK;  // planes per thread: short chunks make many blocks, so many loads in flight

__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// Writes the interior cells among k, k+1, k+2, k+3: one 16-byte store when all four are interior.
__device__ void store_interior(float* out, float4 r, unsigned int k, unsigned int N) {
    if (k >= 1 && k + 3 <= N - 2) {
        *reinterpret_cast<float4*>(out) = r;
        return;
    }
    const float v[4] = {r.x, r.y, r.z, r.w};
    for (unsigned int e = 0; e < 4; ++e)
        if (k + e >= 1 && k + e <= N - 2) out[e] = v[e];
}

// Needs N % 4 == 0, so that every row starts on a 16-byte boundary.
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
stencil_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 2: this thread's first cell k, its row j, its planes iStart..iEnd-1 ----
    // TODO: k is the first of this thread's four cells along k (threads are 4 cells apart;
    // blocks 4 * BLOCK_X cells apart); j from blockIdx.y/threadIdx.y (no halo offset: every
    // thread computes); iStart: blocks along z are Z_CHUNK planes apart and the interior starts
    // at 1; iEnd = iStart + Z_CHUNK, but at most N-1. `active`: j is an interior row and k < N.
    unsigned int k = 0, j = 0, iStart = 1, iEnd = 1;
    bool active = false;
    // ---- END EXERCISE ----

    const unsigned int plane = N * N;  // distance from (i, j, k) to (i+1, j, k)
    const unsigned int lane = threadIdx.x % 32;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    unsigned int at = iStart * plane + j * N + k;
    float4 inPrev = active ? load4(in + at - plane) : zero;
    float4 inCurr = active ? load4(in + at) : zero;
#pragma unroll 2
    for (unsigned int i = iStart; i < iEnd; ++i, at += plane) {
        // ---- EXERCISE 2 of 2: load plane i+1 and rows j-1, j+1; get k-1 and k+4 from the neighbouring lanes; the four outputs ----
        // TODO: inNext = the float4 at plane i+1 (at + plane); down and up = the float4s of
        // rows j-1 and j+1 (at - N, at + N); each only if `active`, else zero. Then the cell k-1
        // is inCurr.w of lane - 1 (__shfl_up_sync) and k+4 is inCurr.x of lane + 1
        // (__shfl_down_sync); lanes 0 and 31 load theirs from `in` instead. Finally the stencil
        // for each of the four cells: r.x uses left as its k-1 neighbour, r.w uses right as k+1.
        float4 inNext = zero;
        float4 r = zero;
        (void)lane;
        // ---- END EXERCISE ----
        if (active) store_interior(out + at, r, k, N);
        inPrev = inCurr;
        inCurr = inNext;
    }
}

// For N not divisible by 4, rows are not 16-byte aligned: one cell per thread, 16 planes each
// (the kernel of step 3 in the lesson).
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
stencil_kernel_unaligned(const float* __restrict__ in, float* __restrict__ out, unsigned int N, Coefficients c) {
    unsigned int k = blockIdx.x * BLOCK_X + threadIdx.x;
    unsigned int j = blockIdx.y * BLOCK_Y + threadIdx.y;
    unsigned int iStart = 1 + blockIdx.z * 16;
    if (j < 1 || j > N - 2 || k < 1 || k > N - 2) return;
    unsigned int iEnd = min(iStart + 16, N - 1);
    const unsigned int plane = N * N;
    unsigned int at = iStart * plane + j * N + k;
    float inPrev = in[at - plane];
    float inCurr = in[at];
#pragma unroll 4
    for (unsigned int i = iStart; i < iEnd; ++i, at += plane) {
        float inNext = in[at + plane];
        out[at] = c.c0 * inCurr + c.c1 * in[at - 1] + c.c2 * in[at + 1] + c.c3 * in[at - N] + c.c4 * in[at + N]
                + c.c5 * inPrev + c.c6 * inNext;
        inPrev = inCurr;
        inCurr = inNext;
    }
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, 1);
    if (N % 4 != 0) {
        dim3 grid(ceil_div(N, BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, 16));
        stencil_kernel_unaligned<<<grid, block, 0, s>>>(in, out, N, c);
        return cudaGetLastError();
    }
    dim3 grid(ceil_div(N, 4 * BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, Z_CHUNK));
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "06_roofline", "Streaming at the roofline", "beyond the book", OpbFormula::Column,
    /*in_tile_dim=*/0, /*out_tile_dim=*/0, /*z_coarsening=*/Z_CHUNK,
    reinterpret_cast<const void*>(stencil_kernel), dim3(BLOCK_X, BLOCK_Y, 1), /*dynamic_shared_bytes=*/0,
};
