// Stage 10 - beyond the book: star stencils of order R = 1..4 (PMPP Fig. 8.3; 7, 13, 19, 25 points),
// with the book's basic kernel (Fig. 8.6), its register-tiled kernel (Fig. 8.12) and a streaming one.
// Lesson: chapters/10_high_order/README.md
#include <cuda_pipeline.h>

#include "common/cuda_check.h"
#include "sweep/order_stage.h"

// out(i, j, k) = w[0]·in(i, j, k) + sum over d = 1..R of the six neighbours at distance d, each with
// its own weight: w[star_weight(d, kMinusK)]·in(i, j, k-d) + w[star_weight(d, kPlusK)]·in(i, j, k+d)
// + the same along j (kMinusJ, kPlusJ) and i (kMinusI, kPlusI). R is a template parameter: every
// loop over d unrolls, and the 2R + 1 planes a thread keeps stay in registers.

// ---------------------------------------------------------------------------------------------
// 1. The basic kernel (Fig. 8.6): one thread per cell, 6R + 1 loads.
constexpr unsigned BASIC_X = 32, BASIC_Y = 4, BASIC_Z = 2;

template <int R>
__global__ void basic_kernel(const float* in, float* out, unsigned int N, StarCoefficients c) {
    unsigned int i = blockIdx.z * blockDim.z + threadIdx.z;
    unsigned int j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    // ---- EXERCISE 1 of 5: interior cells only (R..N-1-R along each axis), then the 6R + 1 terms ----
    if (i >= R && i < N - R && j >= R && j < N - R && k >= R && k < N - R) {
        float sum = c.w[0] * in[i * N * N + j * N + k];
#pragma unroll
        for (int d = 1; d <= R; ++d) {
            sum += c.w[star_weight(d, kMinusK)] * in[i * N * N + j * N + (k - d)]
                 + c.w[star_weight(d, kPlusK)] * in[i * N * N + j * N + (k + d)]
                 + c.w[star_weight(d, kMinusJ)] * in[i * N * N + (j - d) * N + k]
                 + c.w[star_weight(d, kPlusJ)] * in[i * N * N + (j + d) * N + k]
                 + c.w[star_weight(d, kMinusI)] * in[(i - d) * N * N + j * N + k]
                 + c.w[star_weight(d, kPlusI)] * in[(i + d) * N * N + j * N + k];
        }
        out[i * N * N + j * N + k] = sum;
    }
    // ---- END EXERCISE ----
}

// ---------------------------------------------------------------------------------------------
// 2. Register tiling (Fig. 8.12) with a halo of R: a 32×32 block loads a T×T plane per step,
// computes the inner (T-2R)×(T-2R) outputs and walks OUT_TILE_DIM = T - 2R planes along i. The
// active part of the input tile is 2R + 1 planes: each thread keeps its own column's in
// registers (inPlanes[R + d] holds plane i + d), and the current plane is in shared memory too,
// for the other threads' j and k neighbours.
constexpr int IN_TILE_DIM = 32;

template <int R>
__global__ void tiled_kernel(const float* in, float* out, unsigned int N, StarCoefficients c) {
    constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2 * R;
    const int n = int(N);
    int iStart = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - R;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - R;
    bool column = j >= 0 && j < n && k >= 0 && k < n;  // this thread's (j, k) lies in the grid

    float inPlanes[2 * R + 1] = {};
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 2 of 5: planes iStart-R .. iStart+R-1 into inPlanes[0 .. 2R-1]; plane iStart into inCurr_s ----
#pragma unroll
    for (int d = -R; d < R; ++d) {
        if (column && iStart + d >= 0 && iStart + d < n) inPlanes[R + d] = in[(iStart + d) * N * N + j * N + k];
    }
    inCurr_s[threadIdx.y][threadIdx.x] = inPlanes[R];
    // ---- END EXERCISE ----

    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        // ---- EXERCISE 3 of 5: load plane i+R into inPlanes[2R], compute plane i, then shift the planes down by one ----
        if (column && i + R < n) inPlanes[2 * R] = in[(i + R) * N * N + j * N + k];
        __syncthreads();  // inCurr_s holds plane i
        if (i >= R && i < n - R && j >= R && j < n - R && k >= R && k < n - R &&
            threadIdx.y >= R && threadIdx.y < IN_TILE_DIM - R && threadIdx.x >= R && threadIdx.x < IN_TILE_DIM - R) {
            float sum = c.w[0] * inPlanes[R];
#pragma unroll
            for (int d = 1; d <= R; ++d) {
                sum += c.w[star_weight(d, kMinusK)] * inCurr_s[threadIdx.y][threadIdx.x - d]
                     + c.w[star_weight(d, kPlusK)] * inCurr_s[threadIdx.y][threadIdx.x + d]
                     + c.w[star_weight(d, kMinusJ)] * inCurr_s[threadIdx.y - d][threadIdx.x]
                     + c.w[star_weight(d, kPlusJ)] * inCurr_s[threadIdx.y + d][threadIdx.x]
                     + c.w[star_weight(d, kMinusI)] * inPlanes[R - d]
                     + c.w[star_weight(d, kPlusI)] * inPlanes[R + d];
            }
            out[i * N * N + j * N + k] = sum;
        }
        __syncthreads();  // everyone is done reading inCurr_s before it is overwritten
#pragma unroll
        for (int p = 0; p < 2 * R; ++p) inPlanes[p] = inPlanes[p + 1];
        inCurr_s[threadIdx.y][threadIdx.x] = inPlanes[R];
        // ---- END EXERCISE ----
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Streaming (beyond the book, after stage 06): each thread owns four neighbouring cells along k
// (one float4) of one row j and walks a chunk of planes along i. A block is FAST_X × FAST_Y
// threads: FAST_W = 4·FAST_X cells along k, FAST_Y rows along j.
//  - i-neighbours: a register ring of the thread's own four cells in planes i-R .. i+R, and AHEAD
//    more planes already on their way from memory. The ring is indexed with constants only (the
//    loop over planes is unrolled by the ring's length), so no register is copied as it moves on.
//  - j- and k-neighbours: a shared copy of plane i holding the block's rows (the threads' own
//    cells, stored from the ring: no second load), R halo rows above and below, and one float4 left
//    and right of each row (R <= 4 cells are needed there). No corners: a star needs none. The halo
//    is copied straight from global to shared memory (cp.async), HALO_AHEAD planes ahead, into
//    PLANES_S shared planes used in turn: one barrier per plane, and the copies in flight meanwhile.
// Rows start at k = 0: when N is a multiple of 4 every load, copy and store is 16 bytes wide and a
// warp's row is whole 32-byte sectors; the boundary cells among a block's columns are written with
// their own value (stage 06's "whole sectors"). When N is not a multiple of 4, rows do not start
// on a 16-byte boundary (ALIGNED = false): cells move 4 bytes at a time, and the halo copies and
// the stores go through the row's cells in the order of the lanes (cell tx, tx + FAST_X, ...), so
// that a warp's accesses still cover neighbouring bytes. The blocks along k end at the last
// interior column, N-1-R.
#ifndef TRY_FAST_X
#define TRY_FAST_X 16
#endif
#ifndef TRY_FAST_Y
#define TRY_FAST_Y 8
#endif
#ifndef TRY_FAST_AHEAD
#define TRY_FAST_AHEAD 3
#endif
#ifndef TRY_FAST_HALO_AHEAD
#define TRY_FAST_HALO_AHEAD 3
#endif
#ifndef TRY_FAST_MIN_BLOCKS  // blocks per SM that __launch_bounds__ asks registers for, N a multiple of 4
#define TRY_FAST_MIN_BLOCKS 4
#endif
#ifndef TRY_FAST_MIN_BLOCKS_UNALIGNED  // and N not a multiple of 4
#define TRY_FAST_MIN_BLOCKS_UNALIGNED 5
#endif
constexpr int FAST_X = TRY_FAST_X;     // threads along k, four cells each
constexpr int FAST_Y = TRY_FAST_Y;     // threads (rows) along j; the first R rows of threads copy the halo rows
constexpr int FAST_W = 4 * FAST_X;     // cells along k per block
constexpr int AHEAD = TRY_FAST_AHEAD;  // planes of the register ring on their way from memory
constexpr int HALO_AHEAD = TRY_FAST_HALO_AHEAD;  // planes whose halo is on its way to shared memory
constexpr int PLANES_S = 4;            // shared planes: the one read now and up to 3 being filled
static_assert(FAST_Y >= int(kMaxOrder), "the halo rows are copied by the first R rows of threads");
static_assert(HALO_AHEAD >= 1 && HALO_AHEAD < PLANES_S, "the halo's planes must fit the shared planes");
static_assert(32 % FAST_X == 0, "a warp holds whole rows: it reorders its rows' results on its own");

__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ float4& shared4(float* p) { return *reinterpret_cast<float4*>(p); }

// Four cells of a row, followed through the planes: cells ptr[o + e·step] (e = 0..3) where o is a
// multiple of N², the plane's offset; bit e of `inside` says whether cell e lies in the grid.
struct Cells {
    const float* ptr;
    unsigned inside;
    int step;
};

// The cells (j, k + e·step), e = 0..3, of every plane, if `use`. With step 1 and N a multiple of 4
// the four are all inside the grid or all outside; then `ptr` points at cell (0, 0, 0) instead, so
// that the kernel loads them without a test (values no output needs).
template <bool ALIGNED>
__device__ Cells cells_of(const float* in, unsigned N, int j, int k, bool use, int step = 1) {
    const int n = int(N);
    unsigned inside = 0;
    for (int e = 0; e < 4; ++e)
        if (use && j >= 0 && j < n && k + e * step >= 0 && k + e * step < n) inside |= 1u << e;
    return {ALIGNED && !inside ? in : in + (j * n + k), inside, step};
}

// A thread's own four cells (step 1) at plane offset o; when N is not a multiple of 4, those
// outside the grid are 0.
template <bool ALIGNED>
__device__ float4 load_cells(Cells c, unsigned o) {
    const float* p = c.ptr + o;
    if constexpr (ALIGNED) {  // one 16-byte load
        return load4(p);
    } else {  // the row starts off a 16-byte boundary: four 4-byte loads
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (c.inside & 1) v.x = p[0];
        if (c.inside & 2) v.y = p[1];
        if (c.inside & 4) v.z = p[2];
        if (c.inside & 8) v.w = p[3];
        return v;
    }
}

// Starts copying the cells c at plane offset o straight into shared memory at dst (cell e to
// dst[e·step]; cp.async: no register holds them, __pipeline_wait_prior waits for them). Cells
// outside the grid are not copied: no output needs them.
template <bool ALIGNED>
__device__ void copy_cells(float* dst, Cells c, unsigned o) {
    const float* p = c.ptr + o;
    if constexpr (ALIGNED) {
        if (c.inside) __pipeline_memcpy_async(dst, p, 16);
    } else {
        for (int e = 0; e < 4; ++e)
            if (c.inside >> e & 1) __pipeline_memcpy_async(dst + e * c.step, p + e * c.step, 4);
    }
}

// The shared copy of one plane: FAST_Y + 2R rows of FAST_W + 8 floats; the block's cells start at
// column 4, its left neighbours are columns 0..3 and its right ones FAST_W + 4 .. FAST_W + 7.
template <int R>
using SharedPlane = float[FAST_Y + 2 * R][FAST_W + 8];

// The part of a plane's halo that this thread copies: threads with threadIdx.y < R the rows j-R and
// j+FAST_Y (four of their cells: the thread's own columns, or when N is not a multiple of 4 the
// columns tx, tx + FAST_X, ...); the first and the last thread of each row the four cells left of
// the block (k-4 .. k-1) and right of it (k+4 .. k+7).
struct Halo {
    Cells above, below, side;
};

template <int R, bool ALIGNED>
__device__ void copy_halo(SharedPlane<R>& s, const Halo& h, unsigned o) {
    const int sy = R + threadIdx.y, sx = 4 + (ALIGNED ? 4 * threadIdx.x : threadIdx.x);
    copy_cells<ALIGNED>(&s[threadIdx.y][sx], h.above, o);
    copy_cells<ALIGNED>(&s[sy + FAST_Y][sx], h.below, o);
    copy_cells<ALIGNED>(&s[sy][threadIdx.x == 0 ? 0 : FAST_W + 4], h.side, o);
    __pipeline_commit();  // one group per plane
}

// Writes the thread's four results r to row[0..3]. When N is not a multiple of 4 the warp first
// trades them through shared memory (`stage`, the block's rows), so that its 4-byte stores go
// through each row's cells in the order of the lanes: every store instruction then writes
// neighbouring bytes, not every fourth float.
template <bool ALIGNED, int ROWS>
__device__ void store_cells(float* row, unsigned writes, float4 r, float (&stage)[ROWS][FAST_W]) {
    if constexpr (ALIGNED) {
        if (writes) *reinterpret_cast<float4*>(row) = r;
    } else {
        shared4(&stage[threadIdx.y][4 * threadIdx.x]) = r;
        __syncwarp();
        float* first = row - 4 * threadIdx.x;  // the block's first cell of the row, k0 = k - 4·tx
        for (int e = 0; e < 4; ++e)
            if (writes >> e & 1) first[threadIdx.x + e * FAST_X] = stage[threadIdx.y][threadIdx.x + e * FAST_X];
    }
}

template <int R, bool ALIGNED>
__global__ void __launch_bounds__(FAST_X * FAST_Y, ALIGNED ? TRY_FAST_MIN_BLOCKS : TRY_FAST_MIN_BLOCKS_UNALIGNED)
fast_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, unsigned int zChunk,
            StarCoefficients c) {
    constexpr int L = 2 * R + 1 + AHEAD;  // the ring: planes i-R .. i+R+AHEAD
    const int n = int(N);
    const int k0 = blockIdx.x * FAST_W;   // the block's first column; rows start at k = 0
    const int k = k0 + 4 * threadIdx.x;   // this thread's cells k .. k+3
    const int j = R + blockIdx.y * FAST_Y + threadIdx.y;  // interior rows only
    const int iStart = R + blockIdx.z * zChunk;
    const int iEnd = min(iStart + int(zChunk), n - R);
    const unsigned int plane = N * N;  // 32-bit unsigned indices, as in the book: N <= 1625

    const Cells own = cells_of<ALIGNED>(in, N, j, k, true);
    // Unaligned, halo rows and stores go through the row in the lanes' order: cell k0 + tx + e·FAST_X.
    const int kl = ALIGNED ? k : k0 + threadIdx.x, step = ALIGNED ? 1 : FAST_X;
    // ---- EXERCISE 4 of 5: the halo cells this thread copies (see the comment above Halo) ----
    const Halo halo = {cells_of<ALIGNED>(in, N, j - R, kl, threadIdx.y < R, step),
                       cells_of<ALIGNED>(in, N, j + FAST_Y, kl, threadIdx.y < R, step),
                       cells_of<ALIGNED>(in, N, j, threadIdx.x == 0 ? k - 4 : k + 4,
                                         threadIdx.x == 0 || threadIdx.x == FAST_X - 1)};
    // ---- END EXERCISE ----
    // The thread writes cells of an interior row (its own, or unaligned those in the lanes' order);
    // the boundary cells among its own four (k < R or k > N-1-R) keep their own value.
    const unsigned writes = j < n - R ? cells_of<ALIGNED>(in, N, j, kl, true, step).inside : 0;
    bool interior[4];
    for (int e = 0; e < 4; ++e) interior[e] = k + e >= R && k + e < n - R;

    __shared__ __align__(16) SharedPlane<R> plane_s[PLANES_S];  // plane i is in plane_s[(i - iStart) % PLANES_S]
    __shared__ __align__(16) float stage_s[ALIGNED ? 1 : FAST_Y][FAST_W];  // unaligned stores' reordering
    const int sy = R + threadIdx.y, sx = 4 + 4 * threadIdx.x;  // its cells in the shared plane
    // Planes past the grid's last are never used: the grid's last plane is loaded in their place.
    const unsigned last = (n - 1) * plane;
    // The ring: plane iStart-R+m is in q[m % L]. Planes iStart-R .. iStart+R+AHEAD-1 now; the last
    // slot is loaded in the loop's first step.
    float4 q[L];
#pragma unroll
    for (int m = 0; m < L - 1; ++m) q[m] = load_cells<ALIGNED>(own, min((iStart - R + m) * plane, last));
#pragma unroll
    for (int m = 0; m < HALO_AHEAD; ++m) copy_halo<R, ALIGNED>(plane_s[m], halo, min((iStart + m) * plane, last));
    shared4(&plane_s[0][sy][sx]) = q[R];
    __pipeline_wait_prior(HALO_AHEAD - 1);  // plane iStart's halo has landed
    __syncthreads();

    unsigned at = iStart * plane;  // plane i's offset
    for (int i0 = iStart; i0 < iEnd; i0 += L) {
#pragma unroll
        for (int s = 0; s < L; ++s, at += plane) {  // plane i = i0 + s: plane i+d is in q[(s + R + d) % L]
            const int i = i0 + s;
            if (i >= iEnd) break;
            const int b = i - iStart;
            SharedPlane<R>& p = plane_s[b % PLANES_S];
            q[(s + L - 1) % L] = load_cells<ALIGNED>(own, min(at + (R + AHEAD) * plane, last));
            copy_halo<R, ALIGNED>(plane_s[(b + HALO_AHEAD) % PLANES_S], halo, min(at + HALO_AHEAD * plane, last));
            const float4 self = q[(s + R) % L];  // this thread's cells of plane i
            float sum[4];
            // ---- EXERCISE 5 of 5: the four sums from the ring (i) and the shared plane (j, k) ----
            const float4 left = shared4(&p[sy][sx - 4]), right = shared4(&p[sy][sx + 4]);
            // Along k: row[4 + m] is cell k+m, for m = -4 .. 7.
            const float row[12] = {left.x, left.y, left.z, left.w, self.x, self.y, self.z, self.w,
                                   right.x, right.y, right.z, right.w};
#pragma unroll
            for (int e = 0; e < 4; ++e) sum[e] = c.w[0] * row[4 + e];
#pragma unroll
            for (int d = 1; d <= R; ++d) {
                const float4 pi = q[(s + R - d) % L], ni = q[(s + R + d) % L];
                const float4 aj = shared4(&p[sy - d][sx]), bj = shared4(&p[sy + d][sx]);
                const float prev[4] = {pi.x, pi.y, pi.z, pi.w}, next[4] = {ni.x, ni.y, ni.z, ni.w};
                const float up[4] = {aj.x, aj.y, aj.z, aj.w}, down[4] = {bj.x, bj.y, bj.z, bj.w};
#pragma unroll
                for (int e = 0; e < 4; ++e) {  // one term at a time: each a fused multiply-add
                    sum[e] += c.w[star_weight(d, kMinusK)] * row[4 + e - d];
                    sum[e] += c.w[star_weight(d, kPlusK)] * row[4 + e + d];
                    sum[e] += c.w[star_weight(d, kMinusJ)] * up[e];
                    sum[e] += c.w[star_weight(d, kPlusJ)] * down[e];
                    sum[e] += c.w[star_weight(d, kMinusI)] * prev[e];
                    sum[e] += c.w[star_weight(d, kPlusI)] * next[e];
                }
            }
            // ---- END EXERCISE ----
            const float4 r = make_float4(interior[0] ? sum[0] : self.x, interior[1] ? sum[1] : self.y,
                                         interior[2] ? sum[2] : self.z, interior[3] ? sum[3] : self.w);
            store_cells<ALIGNED>(out + (j * n + k) + at, writes, r, stage_s);
            shared4(&plane_s[(b + 1) % PLANES_S][sy][sx]) = q[(s + R + 1) % L];  // plane i+1's own cells
            __pipeline_wait_prior(HALO_AHEAD - 1);  // and its halo, copied HALO_AHEAD - 1 planes ago
            __syncthreads();  // plane i+1 is complete, and every thread is done reading plane i
        }
    }
}

// Planes per block along i: the most (64, 32, 16 or 8) that still make kFastBlocksPerSm blocks for
// every SM. Long chunks re-read fewer planes (each chunk also reads the R planes before and after
// it), short ones keep every SM busy at small N.
#ifndef TRY_FAST_Z
#define TRY_FAST_Z 0  // 0: chosen from N as above
#endif
constexpr unsigned kFastBlocksPerSm = 16;
unsigned fast_planes(unsigned N, unsigned R) {
    if (TRY_FAST_Z > 0) return TRY_FAST_Z;
    static const unsigned sms = [] {
        int device = 0, count = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return unsigned(count);
    }();
    if (N <= 2 * R) return 8;  // no interior: nothing is launched
    const unsigned layer = ceil_div(N - R, FAST_W) * ceil_div(N - 2 * R, FAST_Y);  // blocks per chunk
    unsigned z = 64;
    while (z > 8 && layer * ceil_div(N - 2 * R, z) < kFastBlocksPerSm * sms) z /= 2;
    return z;
}

// ---------------------------------------------------------------------------------------------
template <int R>
Status launch_order(const float* in, float* out, unsigned N, const StarCoefficients& c, OrderKernel kernel,
                    cudaStream_t s) {
    if (kernel == OrderKernel::Basic) {
        dim3 block(BASIC_X, BASIC_Y, BASIC_Z);
        dim3 grid(ceil_div(N, BASIC_X), ceil_div(N, BASIC_Y), ceil_div(N, BASIC_Z));
        basic_kernel<R><<<grid, block, 0, s>>>(in, out, N, c);
    } else if (kernel == OrderKernel::Tiled) {
        constexpr unsigned OUT_TILE_DIM = IN_TILE_DIM - 2 * R;
        dim3 block(IN_TILE_DIM, IN_TILE_DIM, 1);
        dim3 grid(ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM), ceil_div(N, OUT_TILE_DIM));
        tiled_kernel<R><<<grid, block, 0, s>>>(in, out, N, c);
    } else {
        const unsigned z = fast_planes(N, R);
        dim3 block(FAST_X, FAST_Y, 1);
        dim3 grid(ceil_div(N - R, FAST_W), ceil_div(N - 2 * R, FAST_Y), ceil_div(N - 2 * R, z));
        if (N % 4 == 0) fast_kernel<R, true><<<grid, block, 0, s>>>(in, out, N, z, c);
        else fast_kernel<R, false><<<grid, block, 0, s>>>(in, out, N, z, c);
    }
    return cudaGetLastError();
}

Status launch_stencil_order(const float* in, float* out, unsigned N, const StarCoefficients& c, unsigned R,
                            OrderKernel kernel, cudaStream_t s) {
    if (N <= 2 * R) return cudaSuccess;  // no interior cell
    switch (R) {
    case 1: return launch_order<1>(in, out, N, c, kernel, s);
    case 2: return launch_order<2>(in, out, N, c, kernel, s);
    case 3: return launch_order<3>(in, out, N, c, kernel, s);
    case 4: return launch_order<4>(in, out, N, c, kernel, s);
    }
    return cudaErrorInvalidValue;
}

template <int R>
OrderKernelInfo describe_order(OrderKernel kernel, unsigned N) {
    OrderKernelInfo info{};
    if (kernel == OrderKernel::Basic) {
        info = {"Fig. 8.6", {}, {}, reinterpret_cast<const void*>(basic_kernel<R>), dim3(BASIC_X, BASIC_Y, BASIC_Z), 0};
    } else if (kernel == OrderKernel::Tiled) {
        const unsigned out_tile = IN_TILE_DIM - 2 * R;
        info = {"Fig. 8.12", {IN_TILE_DIM, out_tile, 0, 0}, {{out_tile, out_tile, out_tile}, {0, 0, 0}},
                reinterpret_cast<const void*>(tiled_kernel<R>), dim3(IN_TILE_DIM, IN_TILE_DIM, 1), 0};
    } else {
        const unsigned z = fast_planes(N, R);
        const void* kernel = N % 4 == 0 ? reinterpret_cast<const void*>(fast_kernel<R, true>)
                                        : reinterpret_cast<const void*>(fast_kernel<R, false>);
        info = {"beyond the book", {0, z, FAST_W, FAST_Y}, {{z, FAST_Y, FAST_W}, {R, R, 0}}, kernel,
                dim3(FAST_X, FAST_Y, 1), 0};
    }
    return info;
}

// The fast kernel's instance (N % 4) and chunk of planes depend on N.
OrderKernelInfo describe_stencil_order(OrderKernel kernel, unsigned R, unsigned N) {
    switch (R) {
    case 1: return describe_order<1>(kernel, N);
    case 2: return describe_order<2>(kernel, N);
    case 3: return describe_order<3>(kernel, N);
    default: return describe_order<4>(kernel, N);
    }
}

const OrderStageInfo kOrderStage = {"10_high_order", "Higher-order stencils", describe_stencil_order};
