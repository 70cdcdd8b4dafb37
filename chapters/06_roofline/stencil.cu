// Stage 06 - beyond the book: one sweep at the memory roofline.
// Lesson: chapters/06_roofline/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "common/cuda_check.h"
#include "common/l2_planes.h"
#include "common/sm_threads.h"
#include "sweep/stage.h"

// Each thread owns four neighbouring cells along k and walks zChunk planes along i. Its i-1
// and i+1 values stay in registers (as in stage 05); every load is 16 bytes wide (a float4),
// and the k-1/k+1 neighbours come from the next lanes' registers through warp shuffles. There
// is no shared memory and no barrier: nothing holds a warp back but memory itself.
// (plots/roofline_steps.py tries other values with nvcc -DTRY_BLOCK_X=... and so on.)
#ifndef TRY_BLOCK_X
#define TRY_BLOCK_X 32
#define TRY_BLOCK_Y 4
#define TRY_Z_CHUNK 4
#endif
#ifndef TRY_SMALL_Z  // planes per thread where Z_CHUNK would outgrow the L2 (common/l2_planes.h)
#define TRY_SMALL_Z 2
#endif
#ifndef TRY_ROW_ALIGN  // floats: where the unaligned kernel starts each row's first float4
#define TRY_ROW_ALIGN 4
#endif
#ifndef TRY_MIN_BLOCKS  // the unaligned kernel's __launch_bounds__ minimum of blocks per SM: as many
#define TRY_MIN_BLOCKS (1536 / (TRY_BLOCK_X * TRY_BLOCK_Y))  // as 1536 threads, which caps it at 40 registers
#endif
// That minimum only where an SM holds that many threads: not on Turing (sm_75, 1024 threads per
// SM), where ptxas would warn and ignore it; there the bounds give the block size alone, as the
// ignored minimum did. (The host pass, with no __CUDA_ARCH__, keeps the minimum.)
#if TRY_MIN_BLOCKS * TRY_BLOCK_X * TRY_BLOCK_Y <= SM_MAX_THREADS
#define UNALIGNED_LAUNCH_BOUNDS __launch_bounds__(TRY_BLOCK_X * TRY_BLOCK_Y, TRY_MIN_BLOCKS)
#else
#define UNALIGNED_LAUNCH_BOUNDS __launch_bounds__(TRY_BLOCK_X * TRY_BLOCK_Y)
#endif
constexpr unsigned BLOCK_X = TRY_BLOCK_X;  // threads along k: a warp covers 128 cells = 512 contiguous bytes
constexpr unsigned BLOCK_Y = TRY_BLOCK_Y;  // rows (j) per block
constexpr unsigned Z_CHUNK = TRY_Z_CHUNK;  // planes per thread: short chunks make many blocks, so many loads in flight
constexpr unsigned SMALL_Z = TRY_SMALL_Z;  // a shorter chunk for large N (common/l2_planes.h)
constexpr unsigned ROW_ALIGN = TRY_ROW_ALIGN;
constexpr unsigned FULL = 0xffffffffu;     // every lane of the warp takes part in a shuffle

__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// Writes the cells k..k+3 that lie in this row: the interior ones get the stencil r, the row's two
// boundary cells (k = 0 and N-1) their own value from `self` (the input there), which the output
// already holds. So every 32-byte sector of an interior row is written whole, and the L2 never has
// to read a sector from DRAM to complete a partly written one. One 16-byte store when all four
// cells lie in the row.
__device__ void store_row(float* out, float4 r, float4 self, int k, unsigned int N) {
    if (k == 0) r.x = self.x;
    if (k + 3 == int(N) - 1) r.w = self.w;
    if (k >= 0 && k + 3 <= int(N) - 1) {
        *reinterpret_cast<float4*>(out) = r;
        return;
    }
    const float v[4] = {r.x, r.y, r.z, r.w}, own[4] = {self.x, self.y, self.z, self.w};
    for (int e = 0; e < 4; ++e)
        if (k + e >= 0 && k + e <= int(N) - 1) out[e] = k + e == 0 || k + e == int(N) - 1 ? own[e] : v[e];
}

// Needs N % 4 == 0, so that every row starts on a 16-byte boundary.
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
stencil_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, unsigned int zChunk,
               Coefficients c) {
    // ---- EXERCISE 1 of 2: this thread's first cell k, its row j, its planes iStart..iEnd-1 ----
    // TODO: k is the first of this thread's four cells along k (threads are 4 cells apart;
    // blocks 4 * BLOCK_X cells apart); j from blockIdx.y/threadIdx.y (no halo offset: every
    // thread computes); iStart: blocks along z are zChunk planes apart (the launcher chooses zChunk)
    // and the interior starts at 1; iEnd = iStart + zChunk, but at most N-1. `active`: j is an interior row and k < N.
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
        if (active) store_row(out + at, r, inCurr, int(k), N);
        inPrev = inCurr;
        inCurr = inNext;
    }
}

// The four cells in[at..at+3] when they start D floats past a 16-byte boundary: the two aligned
// float4s they straddle, and the right four of their eight floats. A float4 that lies partly
// outside the grid holds no cell that is needed, so it is not loaded.
template <unsigned D>
__device__ float4 load_shifted(const float* in, unsigned at, unsigned cells) {
    if constexpr (D == 0) {
        return load4(in + at);
    } else {
        const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const float4 lo = at >= D ? load4(in + at - D) : zero;
        const float4 hi = at - D + 8 <= cells ? load4(in + at - D + 4) : zero;
        if constexpr (D == 1) return make_float4(lo.y, lo.z, lo.w, hi.x);
        if constexpr (D == 2) return make_float4(lo.z, lo.w, hi.x, hi.y);
        return make_float4(lo.w, hi.x, hi.y, hi.z);
    }
}

// For N % 4 = R != 0, rows do not start on 16-byte boundaries. Here a thread owns the four
// cells of one aligned float4 of a row (a row's first float4 starts at a multiple of ROW_ALIGN
// floats, up to ROW_ALIGN - 1 cells before the row), so its own cells move in aligned 16-byte
// loads and stores. Its neighbours are R (row j+1), 4-R (row j-1), R² % 4 (plane i+1) and
// 4 - R² % 4 (plane i-1) floats off a 16-byte boundary: load_shifted. Along i the four cells
// shift with the rows, so nothing is kept in registers from one plane to the next (the L1
// cache serves the repeated loads).
template <unsigned R>
__global__ void UNALIGNED_LAUNCH_BOUNDS
stencil_kernel_unaligned(const float* __restrict__ in, float* __restrict__ out, unsigned int N,
                         unsigned int zChunk, Coefficients c) {
    const unsigned int plane = N * N, cells = plane * N;
    const unsigned int t = blockIdx.x * BLOCK_X + threadIdx.x;
    const unsigned int j = blockIdx.y * BLOCK_Y + threadIdx.y;
    const unsigned int iStart = 1 + blockIdx.z * zChunk;
    const unsigned int iEnd = min(iStart + zChunk, N - 1);
    const unsigned int lane = threadIdx.x % 32;
    const bool interiorRow = j >= 1 && j <= N - 2;
    for (unsigned int i = iStart; i < iEnd; ++i) {
        const unsigned int row = (i * N + j) * N;                 // cell (i, j, 0)
        const unsigned int at = row / ROW_ALIGN * ROW_ALIGN + 4 * t;  // this thread's cells at..at+3
        const int k = int(at) - int(row);                         // the first one's k; < 0 in the row before
        const bool inRow = interiorRow && k + 3 >= 0 && k <= int(N) - 1;  // a cell of this row
        const bool active = interiorRow && k + 3 >= 1 && k <= int(N) - 2;  // an interior cell of it
        const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const float4 curr = inRow ? load4(in + at) : zero;
        float4 prev = zero, next = zero, down = zero, up = zero;
        if (active) {
            prev = load_shifted<(4 - R * R % 4) % 4>(in, at - plane, cells);
            next = load_shifted<R * R % 4>(in, at + plane, cells);
            down = load_shifted<4 - R>(in, at - N, cells);
            up = load_shifted<R>(in, at + N, cells);
        }
        float left = __shfl_up_sync(FULL, curr.w, 1);     // cell k-1, held by lane - 1
        float right = __shfl_down_sync(FULL, curr.x, 1);  // cell k+4, held by lane + 1
        if (lane == 0 && active && k >= 1) left = in[at - 1];
        if (lane == 31 && active && k + 4 <= int(N) - 1) right = in[at + 4];
        float4 r;
        r.x = c.c0 * curr.x + c.c1 * left   + c.c2 * curr.y + c.c3 * down.x + c.c4 * up.x + c.c5 * prev.x + c.c6 * next.x;
        r.y = c.c0 * curr.y + c.c1 * curr.x + c.c2 * curr.z + c.c3 * down.y + c.c4 * up.y + c.c5 * prev.y + c.c6 * next.y;
        r.z = c.c0 * curr.z + c.c1 * curr.y + c.c2 * curr.w + c.c3 * down.z + c.c4 * up.z + c.c5 * prev.z + c.c6 * next.z;
        r.w = c.c0 * curr.w + c.c1 * curr.z + c.c2 * right  + c.c3 * down.w + c.c4 * up.w + c.c5 * prev.w + c.c6 * next.w;
        if (inRow) store_row(out + at, r, curr, k, N);
    }
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, 1);
    const unsigned z = planes_per_thread(N, sizeof(float), Z_CHUNK, SMALL_Z);  // common/l2_planes.h
    if (N % 4 == 0) {
        dim3 grid(ceil_div(N, 4 * BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, z));
        stencil_kernel<<<grid, block, 0, s>>>(in, out, N, z, c);
        return cudaGetLastError();
    }
    // A row's float4s start up to ROW_ALIGN - 1 cells before it.
    dim3 grid(ceil_div(N + ROW_ALIGN - 1, 4 * BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, z));
    if (N % 4 == 1) stencil_kernel_unaligned<1><<<grid, block, 0, s>>>(in, out, N, z, c);
    if (N % 4 == 2) stencil_kernel_unaligned<2><<<grid, block, 0, s>>>(in, out, N, z, c);
    if (N % 4 == 3) stencil_kernel_unaligned<3><<<grid, block, 0, s>>>(in, out, N, z, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "06_roofline", "Streaming at the roofline", "beyond the book", OpbFormula::Column,
    /*in_tile_dim=*/0, /*out_tile_dim=*/0, /*z_coarsening=*/Z_CHUNK,
    reinterpret_cast<const void*>(stencil_kernel), dim3(BLOCK_X, BLOCK_Y, 1), /*dynamic_shared_bytes=*/0,
};
