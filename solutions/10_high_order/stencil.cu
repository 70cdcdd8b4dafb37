// Stage 10 - beyond the book: star stencils of order R = 1..4 (PMPP Fig. 8.3; 7, 13, 19, 25 points),
// with the book's basic kernel (Fig. 8.6), its register-tiled kernel (Fig. 8.12) and a streaming one.
// Lesson: chapters/10_high_order/README.md
#include <cuda_pipeline.h>
#include <utility>

#include "common/cuda_check.h"
#include "common/device_attribute.h"
#include "common/resident_blocks.h"
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
// 3. Streaming (beyond the book, after stage 06): each thread owns four neighbouring cells of one
// row j, k .. k+3 with k = 4·tx, and walks a chunk of planes along i. A block is FAST_X threads
// along k, FAST_W = 4·FAST_X cells, and FAST_Y rows along j (16; 8 when N is even but not a
// multiple of 4, and at R = 2 when N is odd: FastPlan). With 16-byte accesses each thread takes two
// neighbouring rows, j and j + 1 (half the halo rows per cell of 8-row blocks, with 128 threads
// still, and the shared rows both rows need are read once); else one.
//  - i-neighbours: a register ring of the thread's four cells in planes i-R .. i+R, and AHEAD more
//    planes already on their way from memory. The ring is indexed with constants only (the loop
//    over planes is unrolled by the ring's length), so no register is copied as it moves on.
//  - j- and k-neighbours: a shared copy of plane i holding the block's rows (the threads' own
//    cells, stored from the ring: no second load), R halo rows above and below, and four cells
//    left and right of each row (R <= 4 are needed there). No corners: a star needs none. The halo
//    is copied straight from global to shared memory (cp.async), HALO_AHEAD planes ahead, into
//    PLANES shared planes used in turn: one barrier per plane, and the copies in flight meanwhile.
//  - The barrier (FastPlan below): at R = 1, 2 a block barrier once plane i+1 is complete and
//    every thread is done with plane i. At R = 3, 4 (16- and 4-byte accesses) split barriers, one
//    mbarrier per shared plane: a thread stores its cells of plane i+1 and arrives there, then
//    waits until plane i is complete and computes it, so that warps drift up to a plane apart
//    instead of meeting at every plane (measured in lesson 10: the larger sums pay for it).
// Global memory moves VEC cells per access: the widest that every row start is aligned to. When N
// is a multiple of 4, every load, copy and store is 16 bytes wide, and a warp's row is whole
// 32-byte sectors (the boundary cells among a block's columns are written with their own value,
// stage 06's "whole sectors"); when N is even, 8 bytes (two accesses per thread instead of one).
// When N is odd, 4 bytes: the halo is then copied, and the results stored, in the order of the
// lanes (cells k0 + tx, k0 + tx + FAST_X, ...), so that a warp's accesses are neighbouring bytes,
// and a block is 16 rows tall (but at R = 2): half the halo rows per cell, each of them four accesses.
// The blocks along k end at the last interior column, N-1-R.
#ifndef TRY_FAST_X
#define TRY_FAST_X 16
#endif
#ifndef TRY_FAST_Y
#define TRY_FAST_Y 8
#endif
#ifndef TRY_FAST_Y_ODD
#define TRY_FAST_Y_ODD 16
#endif
#ifndef TRY_FAST_MIN_BLOCKS  // blocks per SM that __launch_bounds__ asks registers for (of 8 rows; as many
#define TRY_FAST_MIN_BLOCKS 4    // threads in the taller blocks)
#endif
constexpr int FAST_X = TRY_FAST_X;  // threads along k, four cells each
constexpr int FAST_W = 4 * FAST_X;  // cells along k per block
// How the fast kernel of order R with VEC cells per access streams (each choice measured best on an
// H100, but two rows at R = 1..3, measured on H200s; lesson 10):
//  - ROWS: rows per thread, 2 with 16-byte accesses (a register ring for each), else 1;
//  - Y: its rows (FAST_Y), 16 when accesses are 4 bytes wide (N odd) but at R = 2, else 8·ROWS;
//  - THREADS: FAST_X · Y / ROWS, and MIN_BLOCKS the blocks per SM that __launch_bounds__ asks
//    registers for: of two rows each, 4 at R = 2 (128 registers a thread), else 3 (134, 162 and
//    168 at R = 1, 3, 4; at R = 1 4 blocks lost up to 5 points from N = 832 on, and at R = 3, 4
//    their 128 registers would spill the rings);
//  - SPLIT: split barriers (mbarriers) rather than one block barrier per plane;
//  - HALO_AHEAD: planes whose halo is on its way to shared memory (3; 4 with split barriers in 8
//    rows or two rows a thread);
//  - AHEAD: planes of the register ring on their way from memory, and L = 2R + 1 + AHEAD the ring
//    (5 at R = 3 with two rows: L = 12 takes 6 shared planes, where L = 10 would take 10, past the
//    48 KB of static shared memory);
//  - PLANES: shared planes, used in turn: a divisor of L, so that the loop over planes, unrolled by
//    L, names each shared plane with a constant too. A block barrier needs 4 (the one read now, up
//    to 3 being filled); split barriers HALO_AHEAD + 2, as a thread may be a plane ahead of others;
//  - ROW_S: floats per shared row: 4 cells left of the block, FAST_W of it, 4 right, and 8 unused
//    (the layout the figures of lesson 10 were measured with); none unused in the taller blocks,
//    so that R = 3's and 4's six planes fit the 48 KB of static shared memory.
// Split barriers wait with mbarrier.try_wait, which needs sm_90 (Hopper) and was measured there;
// the code built for older GPUs keeps the block barrier everywhere.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kSplitBarriers = false;
#else
constexpr bool kSplitBarriers = true;
#endif
__host__ __device__ constexpr int smallest_divisor_from(int L, int P) { return L % P == 0 ? P : smallest_divisor_from(L, P + 1); }
template <int R, int VEC>
struct FastPlan {
    static constexpr int ROWS = VEC == 4 ? 2 : 1;
    static constexpr int Y = VEC == 1 && R != 2 ? TRY_FAST_Y_ODD : TRY_FAST_Y * ROWS;
    static constexpr int THREADS = FAST_X * Y / ROWS;
    static constexpr int MIN_BLOCKS = ROWS == 2 ? (R == 2 ? 4 : 3) : TRY_FAST_MIN_BLOCKS * TRY_FAST_Y / Y;
    static constexpr bool SPLIT = kSplitBarriers && R >= 3 && VEC != 2;
    static constexpr int HALO_AHEAD = SPLIT && (Y == TRY_FAST_Y || ROWS == 2) ? 4 : 3;
    static constexpr int AHEAD = SPLIT ? (ROWS == 2 && R == 3 ? 5 : 3) : (2 * R + 1 + 3) % 4 == 0 ? 3 : 5;
    static constexpr int L = 2 * R + 1 + AHEAD;
    static constexpr int PLANES = SPLIT ? smallest_divisor_from(L, HALO_AHEAD + 2) : 4;
    static constexpr int ROW_S = FAST_W + (Y == TRY_FAST_Y ? 16 : 8);
    static_assert(L % PLANES == 0, "the ring's length is a multiple of the shared planes");
};
template <int FAST_Y> constexpr bool kHaloFits = 2 * FAST_Y <= FAST_X * FAST_Y && 2 * int(kMaxOrder) * FAST_X <= FAST_X * FAST_Y;
static_assert(kHaloFits<TRY_FAST_Y> && kHaloFits<TRY_FAST_Y_ODD>,
              "a block's threads copy its halo: 2R rows of FAST_X groups, and 2·FAST_Y sides");
static_assert(32 % FAST_X == 0, "a warp holds whole rows: it reorders its rows' results on its own");

__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ float2 load2(const float* p) { return *reinterpret_cast<const float2*>(p); }
__device__ float4& shared4(float* p) { return *reinterpret_cast<float4*>(p); }
__device__ float part(float4 v, int e) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; }

// Four cells p[0..3], VEC at a time (one 16-byte load when VEC is 4). Past a row's end they are
// the next row's first cells, which no output needs: a single instruction reads them whatever they
// are. Only at the grid's very end (its last row, in its last plane) would that run past the array;
// there load_cells_inside reads only the cells that lie in the grid (bit e of `inside`; a row ends
// on a multiple of VEC, so each access is wholly inside or outside).
template <int VEC>
__device__ float4 load_cells(const float* p) {
    if constexpr (VEC == 4) return load4(p);
    if constexpr (VEC == 2) {
        const float2 a = load2(p), b = load2(p + 2);
        return make_float4(a.x, a.y, b.x, b.y);
    }
    return make_float4(p[0], p[1], p[2], p[3]);
}
template <int VEC>
__device__ float4 load_cells_inside(const float* p, unsigned inside) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if constexpr (VEC == 4) {
        if (inside) v = load4(p);
    } else if constexpr (VEC == 2) {
        if (inside & 1) {
            const float2 a = load2(p);
            v.x = a.x, v.y = a.y;
        }
        if (inside & 4) {
            const float2 b = load2(p + 2);
            v.z = b.x, v.w = b.y;
        }
    } else {
        if (inside & 1) v.x = p[0];
        if (inside & 2) v.y = p[1];
        if (inside & 4) v.z = p[2];
        if (inside & 8) v.w = p[3];
    }
    return v;
}

// Starts copying four cells p[e·STEP] (e = 0..3) straight into shared memory at dst[e·STEP]
// (cp.async: no register holds them; __pipeline_wait_prior waits for them): VEC cells a copy, or
// one at a time when STEP is not 1.
template <int VEC, int STEP>
__device__ void copy_cells(float* dst, const float* p) {
    if constexpr (VEC == 4 && STEP == 1) {
        __pipeline_memcpy_async(dst, p, 16);
    } else if constexpr (VEC == 2 && STEP == 1) {
        __pipeline_memcpy_async(dst, p, 8);
        __pipeline_memcpy_async(dst + 2, p + 2, 8);
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) __pipeline_memcpy_async(dst + e * STEP, p + e * STEP, 4);
    }
}

// The shared copy of one plane: FAST_Y + 2R rows; the block's cells start at column 4, its left
// neighbours are columns 0..3 and its right ones FAST_W + 4 .. FAST_W + 7.
template <int R, int FAST_Y, int ROW_S>
using SharedPlane = float[FAST_Y + 2 * R][ROW_S];

// What one thread copies of each plane's halo (pointers to plane 0's cells; shared rows and columns
// of a SharedPlane), counted as if the block had a thread per row: FAST_X · FAST_Y threads, t =
// threadIdx.y · FAST_X + threadIdx.x (a thread of two rows copies for t and t + its block's threads,
// FastPlan::THREADS). The 2R halo rows are FAST_X groups of four cells each; thread t < 2R·FAST_X
// copies group t % FAST_X of halo row t / FAST_X (rows j0-R ..
// j0-1, then j0+FAST_Y .. j0+FAST_Y+R-1; when N is even (ALIGNED) a group is four neighbours,
// else every FAST_X-th cell). The last 2·FAST_Y threads copy the sides: four cells left of row
// j0 + g/2 of the block when g = t - (FAST_X·FAST_Y - 2·FAST_Y) is even, right of it when odd.
// Rows past the grid are not copied: no output needs them.
struct Halo {
    const float *row, *side;
    int row_y, row_x, side_y, side_x;
    bool rows, sides;
};

template <int R, int VEC>
__device__ Halo halo_of(const float* in, unsigned N, int j0, int k0, int t) {
    constexpr bool ALIGNED = VEC > 1;
    constexpr int FAST_Y = FastPlan<R, VEC>::Y;
    const int n = int(N);
    Halo h{};
    // ---- EXERCISE 4 of 5: the halo cells this thread copies (see the comment above Halo) ----
    const int r = t / FAST_X, g = t % FAST_X;  // halo row r (0 .. 2R-1), group g
    const int jr = r < R ? j0 - R + r : j0 + FAST_Y + r - R;
    h.rows = r < 2 * R && jr < n;
    h.row_y = r < R ? r : FAST_Y + r;
    h.row_x = 4 + (ALIGNED ? 4 * g : g);
    h.row = in + (jr * n + k0 + h.row_x - 4);
    const int u = t - (FAST_X * FAST_Y - 2 * FAST_Y);  // the sides: row u / 2, left or right
    h.sides = u >= 0 && j0 + u / 2 < n;
    h.side_y = R + u / 2;
    h.side_x = u % 2 == 0 ? 0 : FAST_W + 4;
    h.side = in + ((j0 + u / 2) * n + k0 + h.side_x - 4);
    // ---- END EXERCISE ----
    return h;
}

template <int VEC, class Plane>
__device__ void copy_halo(Plane& s, const Halo& h, unsigned o) {
    if (h.rows) copy_cells<VEC, (VEC > 1 ? 1 : FAST_X)>(&s[h.row_y][h.row_x], h.row + o);
    if (h.sides) copy_cells<VEC, 1>(&s[h.side_y][h.side_x], h.side + o);
    __pipeline_commit();  // one group per plane
}

// The halo a thread of the fast kernel copies: its own place t's, and where it takes two rows, the
// sides of place t + THREADS (the halo rows are the first 2R·FAST_X places, all below THREADS, and
// the sides the last 2·FAST_Y, all from THREADS on: one thread copies at most one of each).
template <int R, int VEC>
__device__ Halo thread_halo(const float* in, unsigned N, int j0, int k0) {
    using Plan = FastPlan<R, VEC>;
    static_assert(Plan::ROWS == 1 || (2 * R * FAST_X <= Plan::THREADS && 2 * Plan::Y <= Plan::THREADS),
                  "with two rows a thread, each thread copies at most one halo row group and one side");
    const int t = threadIdx.y * FAST_X + threadIdx.x;
    Halo h = halo_of<R, VEC>(in, N, j0, k0, t);
    if constexpr (Plan::ROWS == 2) {
        const Halo second = halo_of<R, VEC>(in, N, j0, k0, t + Plan::THREADS);
        h.side = second.side, h.side_y = second.side_y, h.side_x = second.side_x, h.sides = second.sides;
    }
    return h;
}

// Split barriers (PTX mbarriers, 8-byte objects in shared memory): a phase completes when `count`
// arrivals have come, each thread's own (mbar_arrive) or, with mbar_arrive_after_copies, once that
// thread's cp.async so far have landed; mbar_wait(b, parity) waits for the phase of that parity
// (the plane's use of its slot: 0, 1, 0, ...). A thread arrives once per phase on each barrier.
__device__ __forceinline__ unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(unsigned long long* b, unsigned count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(shared_address(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* b) {  // release: this thread's shared stores are seen
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}" ::"r"(shared_address(b)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_after_copies(unsigned long long* b) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(shared_address(b)) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* b, unsigned parity) {  // acquire
    asm volatile("{\n .reg .pred done;\n WAIT_%=:\n mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n @!done bra WAIT_%=;\n}"
                 ::"r"(shared_address(b)), "r"(parity) : "memory");
}

template <int R, int VEC>
__global__ void __launch_bounds__(FastPlan<R, VEC>::THREADS, FastPlan<R, VEC>::MIN_BLOCKS)
fast_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, unsigned int zChunk,
            StarCoefficients c) {
    constexpr bool ALIGNED = VEC > 1;  // halo rows copied, results stored, four neighbours at a time
    using Plan = FastPlan<R, VEC>;
    constexpr bool SPLIT = Plan::SPLIT;
    constexpr int AHEAD = Plan::AHEAD, L = Plan::L, HALO_AHEAD = Plan::HALO_AHEAD, PLANES = Plan::PLANES;
    constexpr int FAST_Y = Plan::Y, ROWS = Plan::ROWS;
    using Plane = SharedPlane<R, FAST_Y, Plan::ROW_S>;
    const int n = int(N);
    const int k0 = blockIdx.x * FAST_W;   // the block's first column; rows start at k = 0
    const int j0 = R + blockIdx.y * FAST_Y;  // its first row: interior rows only
    const int k = k0 + 4 * threadIdx.x;  // this thread's cells k .. k+3 of its row(s) j[r]
    const int iStart = R + blockIdx.z * zChunk;
    const int iEnd = min(iStart + int(zChunk), n - R);
    const unsigned int plane = N * N;  // 32-bit unsigned indices, as in the book: N <= 1625
    const int sx = 4 + 4 * threadIdx.x;  // its first cell in the shared plane's rows sy[r]
    // Per row r of the thread (j0 + ROWS·ty + r): bit e of inside: cell k+e lies in the grid;
    // own: its cells in plane 0 (a row past the grid: row 0's).
    int j[ROWS], sy[ROWS];
    unsigned inside[ROWS];
    const float* own[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        j[r] = j0 + ROWS * threadIdx.y + r;
        sy[r] = R + ROWS * threadIdx.y + r;
        inside[r] = 0;
        for (int e = 0; e < 4; ++e) inside[r] |= (j[r] < n && k + e < n ? 1u : 0u) << e;
        own[r] = in + ((j[r] < n ? j[r] : 0) * n + k);
    }
    const Halo halo = thread_halo<R, VEC>(in, N, j0, k0);
    // The thread's results go to row j (an interior row) at k .. k+3, or when N is odd to the cells
    // k0 + tx + e·FAST_X (the lanes' order); those on the boundary (k < R or k > N-1-R) keep their
    // own value. Bit e of writes[r]: it writes cell e of row r.
    const int kw = ALIGNED ? k : k0 + threadIdx.x, wstep = ALIGNED ? 1 : FAST_X;
    unsigned writes[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        writes[r] = 0;
        for (int e = 0; e < 4; ++e) writes[r] |= (j[r] < n - R && kw + e * wstep < n ? 1u : 0u) << e;
    }
    bool interior[4];
    for (int e = 0; e < 4; ++e) interior[e] = k + e >= R && k + e < n - R;

    __shared__ __align__(16) Plane plane_s[PLANES];  // plane i is in plane_s[(i - iStart) % PLANES]
    // Split barriers: plane_s[x] is complete when cells_s[x] (every thread's own cells stored) and
    // halo_s[x] (every thread's halo copies landed) have completed their phase.
    __shared__ unsigned long long cells_s[SPLIT ? PLANES : 1], halo_s[SPLIT ? PLANES : 1];
    __shared__ __align__(16) float stage_s[ALIGNED ? 1 : FAST_Y][FAST_W];  // unaligned results, reordered
    // The ring of row r: plane iStart-R+m is in q[r][m % L]. Planes iStart-R .. iStart+R+AHEAD-1
    // now (those past the grid's last plane are never used: not loaded); the last slot is loaded
    // in the loop's first step.
    float4 q[ROWS][L];
#pragma unroll
    for (int m = 0; m < L - 1; ++m) {
        const int pl = iStart - R + m;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            if (pl < n - 1) q[r][m] = load_cells<VEC>(own[r] + pl * plane);
            else if (pl == n - 1) q[r][m] = load_cells_inside<VEC>(own[r] + pl * plane, inside[r]);
        }
    }
    if constexpr (SPLIT) {
        if (threadIdx.x == 0 && threadIdx.y == 0)
            for (int x = 0; x < PLANES; ++x) mbar_init(&cells_s[x], Plan::THREADS), mbar_init(&halo_s[x], Plan::THREADS);
        __syncthreads();  // the mbarriers are ready
    }
#pragma unroll
    for (int m = 0; m < HALO_AHEAD; ++m)
        if (iStart + m < iEnd) {
            copy_halo<VEC>(plane_s[m], halo, (iStart + m) * plane);
            if constexpr (SPLIT) mbar_arrive_after_copies(&halo_s[m]);
        } else {
            __pipeline_commit();  // an empty group keeps the count: one per plane
        }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) shared4(&plane_s[0][sy[r]][sx]) = q[r][R];
    if constexpr (SPLIT) {
        mbar_arrive(&cells_s[0]);
    } else {
        __pipeline_wait_prior(HALO_AHEAD - 1);  // plane iStart's halo has landed
        __syncthreads();
    }

    unsigned at = iStart * plane;  // plane i's offset
    for (int i0 = iStart; i0 < iEnd; i0 += L) {
#pragma unroll
        for (int s = 0; s < L; ++s, at += plane) {  // plane i = i0 + s: plane i+d is in q[(s + R + d) % L]
            const int i = i0 + s;
            if (i >= iEnd) break;
            Plane& p = plane_s[s % PLANES];  // L is a multiple of PLANES
            const unsigned ahead = at + (R + AHEAD) * plane;
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (i + R + AHEAD < n - 1) q[r][(s + L - 1) % L] = load_cells<VEC>(own[r] + ahead);
                else if (i + R + AHEAD == n - 1) q[r][(s + L - 1) % L] = load_cells_inside<VEC>(own[r] + ahead, inside[r]);
            }
            const int halo_slot = (s + HALO_AHEAD) % PLANES;  // where plane i+HALO_AHEAD's halo goes
            if constexpr (SPLIT) {
                // Plane i+1's own cells go to a slot that last held plane i+1-PLANES: every thread has
                // arrived at plane i-1 since, so it is done computing plane i-3 and before.
                if (i + 1 < iEnd) {
#pragma unroll
                    for (int r = 0; r < ROWS; ++r) shared4(&plane_s[(s + 1) % PLANES][sy[r]][sx]) = q[r][(s + R + 1) % L];
                    mbar_arrive(&cells_s[(s + 1) % PLANES]);
                }
                const unsigned parity = (i - iStart) / PLANES % 2;
                mbar_wait(&cells_s[s % PLANES], parity);  // plane i is complete
                mbar_wait(&halo_s[s % PLANES], parity);
                // Now every thread has arrived at plane i, so is done computing plane i-2 and before:
                // plane i+HALO_AHEAD-PLANES among them, whose slot the halo of plane i+HALO_AHEAD takes.
                if (i + HALO_AHEAD < iEnd) {
                    copy_halo<VEC>(plane_s[halo_slot], halo, at + HALO_AHEAD * plane);
                    mbar_arrive_after_copies(&halo_s[halo_slot]);
                }
            } else {
                if (i + HALO_AHEAD < iEnd) copy_halo<VEC>(plane_s[halo_slot], halo, at + HALO_AHEAD * plane);
                else __pipeline_commit();
            }
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                // Row by row: ring(d, e): cell k+e of row j[r] in plane i+d. cell(dj, dk, e): the cell
                // dj rows and dk columns from cell k+e in plane i (|dj|, |dk| <= R), from the shared
                // plane, whose rows the compiler reads as float4s, each once.
                auto ring = [&](int d, int e) { return part(q[r][(s + R + d) % L], e); };
                auto cell = [&](int dj, int dk, int e) {
                    const int x = e + dk, chunk = x < 0 ? -1 : x / 4;  // x = -4 .. 7: which float4, which cell
                    return part(shared4(&p[sy[r] + dj][sx + 4 * chunk]), x - 4 * chunk);
                };
                float sum[4];
                // ---- EXERCISE 5 of 5: the four sums, from the ring (i) and the shared plane (j, k) ----
#pragma unroll
                for (int e = 0; e < 4; ++e) sum[e] = c.w[0] * ring(0, e);
#pragma unroll
                for (int d = 1; d <= R; ++d) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {  // one term at a time: each a fused multiply-add
                        sum[e] += c.w[star_weight(d, kMinusK)] * cell(0, -d, e);
                        sum[e] += c.w[star_weight(d, kPlusK)] * cell(0, d, e);
                        sum[e] += c.w[star_weight(d, kMinusJ)] * cell(-d, 0, e);
                        sum[e] += c.w[star_weight(d, kPlusJ)] * cell(d, 0, e);
                        sum[e] += c.w[star_weight(d, kMinusI)] * ring(-d, e);
                        sum[e] += c.w[star_weight(d, kPlusI)] * ring(d, e);
                    }
                }
                // ---- END EXERCISE ----
                const float4 v = make_float4(interior[0] ? sum[0] : ring(0, 0), interior[1] ? sum[1] : ring(0, 1),
                                             interior[2] ? sum[2] : ring(0, 2), interior[3] ? sum[3] : ring(0, 3));
                float* row = out + (j[r] * n + kw) + at;
                if constexpr (VEC == 4) {
                    if (writes[r]) *reinterpret_cast<float4*>(row) = v;
                } else if constexpr (VEC == 2) {
                    if (writes[r] & 1) *reinterpret_cast<float2*>(row) = make_float2(v.x, v.y);
                    if (writes[r] & 4) *reinterpret_cast<float2*>(row + 2) = make_float2(v.z, v.w);
                } else {  // through shared memory into the lanes' order; a warp holds whole rows
                    shared4(&stage_s[threadIdx.y][4 * threadIdx.x]) = v;
                    __syncwarp();
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        if (writes[r] >> e & 1) row[e * FAST_X] = stage_s[threadIdx.y][threadIdx.x + e * FAST_X];
                    if (SPLIT) __syncwarp();  // read before the next plane's results are staged (no block barrier)
                }
            }
            if constexpr (!SPLIT) {
#pragma unroll
                for (int r = 0; r < ROWS; ++r)  // plane i+1's own cells
                    shared4(&plane_s[(s + 1) % PLANES][sy[r]][sx]) = q[r][(s + R + 1) % L];
                __pipeline_wait_prior(HALO_AHEAD - 1);  // and its halo, copied HALO_AHEAD - 1 planes ago
                __syncthreads();  // plane i+1 is complete, and every thread is done reading plane i
            }
        }
    }
}

// The fast kernel's instance for N, VEC cells per access (the widest that every row start is
// aligned to), its rows per block (FastPlan::Y) and its threads along j (Y / ROWS): the launcher,
// the chunk of planes and the report all take them from here.
struct FastInstance {
    void (*kernel)(const float*, float*, unsigned, unsigned, StarCoefficients);
    unsigned rows, threads_y;
};
template <int R, int VEC> FastInstance fast_instance() {
    using Plan = FastPlan<R, VEC>;
    return {fast_kernel<R, VEC>, unsigned(Plan::Y), unsigned(Plan::Y / Plan::ROWS)};
}
template <int R> FastInstance fast_kernel_for(unsigned N) {
    return N % 4 == 0 ? fast_instance<R, 4>() : N % 2 == 0 ? fast_instance<R, 2>() : fast_instance<R, 1>();
}

// Planes per block along i: the most (64, 32, 16 or 8) that still give every SM kFastRounds rounds
// of blocks (the blocks that fit on it at once, from the occupancy calculator, kFastRounds times).
// Long chunks re-read fewer planes (each chunk also reads the R planes before and after it); many
// rounds keep the last one short, in which SMs run out of blocks (lesson 10 measures the trade).
#ifndef TRY_FAST_Z
#define TRY_FAST_Z 0  // 0: chosen from N as above
#endif
#ifndef TRY_FAST_ROUNDS
#define TRY_FAST_ROUNDS 10
#endif
constexpr unsigned kFastRounds = TRY_FAST_ROUNDS;
template <int R> unsigned fast_planes(unsigned N) {
    if (TRY_FAST_Z > 0) return TRY_FAST_Z;
    if (N <= 2 * R) return 8;  // no interior: nothing is launched
    const FastInstance fast = fast_kernel_for<R>(N);
    const unsigned layer = ceil_div(N - R, FAST_W) * ceil_div(N - 2 * R, fast.rows);  // blocks per chunk
    const unsigned slots = unsigned(resident_blocks(reinterpret_cast<const void*>(fast.kernel), FAST_X * fast.threads_y, 0)) * sm_count();
    unsigned z = 64;
    while (z > 8 && layer * ceil_div(N - 2 * R, z) < kFastRounds * slots) z /= 2;
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
        const auto [fast, rows, threads_y] = fast_kernel_for<R>(N);
        const unsigned z = fast_planes<R>(N);
        dim3 block(FAST_X, threads_y, 1);
        dim3 grid(ceil_div(N - R, FAST_W), ceil_div(N - 2 * R, rows), ceil_div(N - 2 * R, z));
        fast<<<grid, block, 0, s>>>(in, out, N, z, c);
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
        const auto [fast, rows, threads_y] = fast_kernel_for<R>(N);
        const unsigned z = fast_planes<R>(N);
        info = {"beyond the book", {0, z, FAST_W, rows}, {{z, rows, FAST_W}, {R, R, 0}},
                reinterpret_cast<const void*>(fast), dim3(FAST_X, threads_y, 1), 0};
    }
    return info;
}

// The fast kernel's instance (fast_kernel_for) and chunk of planes depend on N.
OrderKernelInfo describe_stencil_order(OrderKernel kernel, unsigned R, unsigned N) {
    switch (R) {
    case 1: return describe_order<1>(kernel, N);
    case 2: return describe_order<2>(kernel, N);
    case 3: return describe_order<3>(kernel, N);
    default: return describe_order<4>(kernel, N);
    }
}

const OrderStageInfo kOrderStage = {"10_high_order", "Higher-order stencils", describe_stencil_order};
