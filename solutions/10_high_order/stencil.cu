// Stage 10 - beyond the book: star stencils of order R = 1..4 (PMPP Fig. 8.3; 7, 13, 19, 25 points),
// with the book's basic kernel (Fig. 8.6), its register-tiled kernel (Fig. 8.12) and a streaming one.
// Lesson: chapters/10_high_order/README.md
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
// 3. Streaming (beyond the book, after stage 06): a block of FAST_X × FAST_Y threads, one column
// (j, k) each, walks FAST_Z planes along i. A thread's i-neighbours are its own column's
// 2R + 1 planes in a register queue (q[R + d] holds plane i + d), so each plane of its column is
// loaded once per chunk. Its j and k neighbours come from a shared-memory copy of plane i: the
// block's FAST_Y rows of FAST_X cells (the threads' own q[R]) and a halo of R rows above and below
// and R columns left and right (no corners: a star needs none). Two copies of the plane
// alternate, so one barrier per plane suffices, and the next plane's loads are issued before the
// barrier so they are in flight while the current plane is computed.
// Rows start at k = 0, so a warp's loads and stores cover whole 128-byte lines when N is a
// multiple of 32, and the boundary cells in a block's columns get their own value (the output
// holds it already), as in stage 06, so the L2 seldom has to complete a partly written sector from
// DRAM. The blocks along k end at the last interior column, N-1-R: no block is launched for the R
// boundary columns alone (at N = 257 and R = 4, 4 blocks along k instead of 5), and at most those
// R cells at a row's end stay unwritten. Change the shape here, or with nvcc -DTRY_FAST_X=...
#ifndef TRY_FAST_X
#define TRY_FAST_X 64
#endif
#ifndef TRY_FAST_Y
#define TRY_FAST_Y 4
#endif
#ifndef TRY_FAST_Z
#define TRY_FAST_Z 16
#endif
constexpr int FAST_X = TRY_FAST_X;  // threads (cells) along k per block
constexpr int FAST_Y = TRY_FAST_Y;  // threads (rows) along j per block
constexpr int FAST_Z = TRY_FAST_Z;  // planes per block along i

// The halo of plane i that this thread loads: threads with threadIdx.y < R load row j-R and row
// j+FAST_Y of their column k; threads with threadIdx.x < R load column k-R and column k+FAST_X of
// their row j. A cell outside the grid is never a neighbour of an output: 0.
struct Halo {
    float above, below, left, right;
};

template <int R>
__device__ Halo load_halo(const float* __restrict__ in, unsigned int N, int i, int j, int k) {
    const int n = int(N);
    Halo h = {0.0f, 0.0f, 0.0f, 0.0f};
    const float* p = in + i * N * N;  // plane i
    // ---- EXERCISE 4 of 5: the halo cells this thread loads (see the comment above Halo) ----
    if (threadIdx.y < R && k < n) {
        h.above = p[(j - R) * N + k];  // j - R >= 0: the block's rows start at R
        if (j + FAST_Y < n) h.below = p[(j + FAST_Y) * N + k];
    }
    if (threadIdx.x < R && j < n) {
        if (k - R >= 0) h.left = p[j * N + k - R];
        if (k + FAST_X < n) h.right = p[j * N + k + FAST_X];
    }
    // ---- END EXERCISE ----
    return h;
}

template <int R>
__global__ void __launch_bounds__(FAST_X * FAST_Y)
fast_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned int N, StarCoefficients c) {
    const int n = int(N);
    const int k = blockIdx.x * FAST_X + threadIdx.x;      // from k = 0: rows start on line boundaries
    const int j = R + blockIdx.y * FAST_Y + threadIdx.y;  // interior rows only
    const int iStart = R + blockIdx.z * FAST_Z;
    const int iEnd = min(iStart + FAST_Z, n - R);
    const bool column = j < n && k < n;   // this thread's cell lies in the grid
    const bool row = j < n - R && k < n;  // and in an interior row: the thread writes it
    const int sy = threadIdx.y + R, sx = threadIdx.x + R;  // its cell in the shared plane

    __shared__ float plane_s[2][FAST_Y + 2 * R][FAST_X + 2 * R];
    const unsigned int plane = N * N;  // 32-bit unsigned indices, as in the book: N <= 1625
    unsigned int at = iStart * plane + j * N + k;
    float q[2 * R + 1];
#pragma unroll
    for (int d = -R; d <= R; ++d) q[R + d] = column ? in[at + d * plane] : 0.0f;
    Halo h = load_halo<R>(in, N, iStart, j, k);

    int b = 0;
    for (int i = iStart; i < iEnd; ++i, at += plane, b ^= 1) {
        plane_s[b][sy][sx] = q[R];
        if (threadIdx.y < R) {
            plane_s[b][threadIdx.y][sx] = h.above;
            plane_s[b][sy + FAST_Y][sx] = h.below;
        }
        if (threadIdx.x < R) {
            plane_s[b][sy][threadIdx.x] = h.left;
            plane_s[b][sy][sx + FAST_X] = h.right;
        }
        const bool more = i + 1 < iEnd;
        const float next = column && more ? in[at + (R + 1) * plane] : 0.0f;  // plane i+R+1 of this column
        if (more) h = load_halo<R>(in, N, i + 1, j, k);
        __syncthreads();  // plane_s[b] holds plane i; plane_s[b ^ 1] is free to be written next
        // ---- EXERCISE 5 of 5: the sum from the queue (i) and the shared plane (j, k); store it; move the queue on ----
        float sum = c.w[0] * q[R];
#pragma unroll
        for (int d = 1; d <= R; ++d) {
            sum += c.w[star_weight(d, kMinusK)] * plane_s[b][sy][sx - d]
                 + c.w[star_weight(d, kPlusK)] * plane_s[b][sy][sx + d]
                 + c.w[star_weight(d, kMinusJ)] * plane_s[b][sy - d][sx]
                 + c.w[star_weight(d, kPlusJ)] * plane_s[b][sy + d][sx]
                 + c.w[star_weight(d, kMinusI)] * q[R - d]
                 + c.w[star_weight(d, kPlusI)] * q[R + d];
        }
        if (row) out[at] = k >= R && k < n - R ? sum : q[R];  // boundary cells: their own value
#pragma unroll
        for (int p = 0; p < 2 * R; ++p) q[p] = q[p + 1];
        q[2 * R] = next;
        // ---- END EXERCISE ----
    }
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
        dim3 block(FAST_X, FAST_Y, 1);
        dim3 grid(ceil_div(N - R, FAST_X), ceil_div(N - 2 * R, FAST_Y), ceil_div(N - 2 * R, FAST_Z));
        fast_kernel<R><<<grid, block, 0, s>>>(in, out, N, c);
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
OrderKernelInfo describe_order(OrderKernel kernel) {
    OrderKernelInfo info{};
    if (kernel == OrderKernel::Basic) {
        info = {"Fig. 8.6", {}, {}, reinterpret_cast<const void*>(basic_kernel<R>), dim3(BASIC_X, BASIC_Y, BASIC_Z), 0};
    } else if (kernel == OrderKernel::Tiled) {
        const unsigned out_tile = IN_TILE_DIM - 2 * R;
        info = {"Fig. 8.12", {IN_TILE_DIM, out_tile, 0, 0}, {{out_tile, out_tile, out_tile}, {0, 0, 0}},
                reinterpret_cast<const void*>(tiled_kernel<R>), dim3(IN_TILE_DIM, IN_TILE_DIM, 1), 0};
    } else {
        info = {"beyond the book", {0, FAST_Z, FAST_X, FAST_Y}, {{FAST_Z, FAST_Y, FAST_X}, {R, R, 0}},
                reinterpret_cast<const void*>(fast_kernel<R>), dim3(FAST_X, FAST_Y, 1), 0};
    }
    return info;
}

OrderKernelInfo describe_stencil_order(OrderKernel kernel, unsigned R, unsigned N) {
    (void)N;  // the kernels' shapes do not depend on N
    switch (R) {
    case 1: return describe_order<1>(kernel);
    case 2: return describe_order<2>(kernel);
    case 3: return describe_order<3>(kernel);
    default: return describe_order<4>(kernel);
    }
}

const OrderStageInfo kOrderStage = {"10_high_order", "Higher-order stencils", describe_stencil_order};
