// Stage 07 - beyond the book: the time loop. The heat equation with three boundary conditions.
// Lesson: chapters/07_heat_equation/README.md
#include <utility>

#include "cells.cuh"
#include "heat_stage.h"

// The sweep of stage 06, in any precision: a thread owns W neighbouring cells along k (one
// 16-byte load each: 4 floats, 2 doubles, 8 halves; W = 1 when rows are not 16-byte aligned)
// and walks Z_CHUNK planes along i, its i-1 and i+1 cells in registers and its k-1 and k+W
// neighbours from the next lanes through shuffles.
constexpr unsigned BLOCK_X = 32;  // threads along k
constexpr unsigned BLOCK_Y = 8;   // rows (j) per block
constexpr unsigned Z_CHUNK = 4;   // planes (i) per thread

// Cells x..x+W-1 of one row: writes those that are state cells (1..N-2 along k), one 16-byte
// store when all of them are.
template <int W, class T>
__device__ void store_state_cells(T* row, const Cells<T, W>& u, unsigned int k, unsigned int N) {
    // ---- EXERCISE 2 of 5: Dirichlet - a step writes the state cells and leaves the ghosts ----
    bool all_state = k >= 1 && k + W - 1 <= N - 2;
    if (all_state) {
        store_cells<W>(row + k, u);
        return;
    }
    for (int e = 0; e < W; ++e)
        if (k + e >= 1 && k + e <= N - 2) row[k + e] = from_arith<T>(u.v[e]);
    // ---- END EXERCISE ----
}

// The ghost index (0 or N-1, on the `low` face or the high one) that takes the value of state
// cell x along one axis, or -1 if that ghost copies another cell.
__device__ int ghost_copying(unsigned int x, unsigned int N, Boundary bc, bool low) {
    unsigned int copied = 0;
    if (bc == Boundary::Neumann) {
        // ---- EXERCISE 3 of 5: Neumann - the ghost mirrors the state cell next to it ----
        copied = low ? 1 : N - 2;
        // ---- END EXERCISE ----
    } else {
        // ---- EXERCISE 4 of 5: periodic - the ghost copies the state cell on the far side ----
        copied = low ? N - 2 : 1;
        // ---- END EXERCISE ----
    }
    return x == copied ? int(low ? 0 : N - 1) : -1;
}

// Writes the new values of cells (i, j, k..k+W-1), then the face ghosts that copy them.
template <int W, class T>
__device__ void store_step(T* out, const Cells<T, W>& u, unsigned int i, unsigned int j, unsigned int k,
                           unsigned int N, Boundary bc) {
    store_state_cells(out + (i * N + j) * N, u, k, N);
    if (bc == Boundary::Dirichlet) return;  // its ghosts hold fixed values
    for (int side = 0; side < 2; ++side) {
        bool low = side == 0;
        int gi = ghost_copying(i, N, bc, low), gj = ghost_copying(j, N, bc, low);
        if (gi >= 0) store_state_cells(out + (gi * N + j) * N, u, k, N);  // a row of the ghost plane
        if (gj >= 0) store_state_cells(out + (i * N + gj) * N, u, k, N);  // a ghost row of this plane
        for (int e = 0; e < W; ++e) {
            int gk = ghost_copying(k + e, N, bc, low);
            if (gk >= 0 && k + e >= 1 && k + e <= N - 2) out[(i * N + j) * N + gk] = from_arith<T>(u.v[e]);
        }
    }
}

template <int W, class T>
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
heat_step_kernel(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source, unsigned int N,
                 Boundary bc, Arith<T> r) {
    using A = Arith<T>;
    unsigned int k = W * (blockIdx.x * BLOCK_X + threadIdx.x);  // this thread's first cell along k
    unsigned int j = blockIdx.y * BLOCK_Y + threadIdx.y;
    unsigned int iStart = 1 + blockIdx.z * Z_CHUNK;
    unsigned int iEnd = min(iStart + Z_CHUNK, N - 1);
    bool active = j >= 1 && j <= N - 2 && k < N;  // no early return: every lane takes part in the shuffles

    const unsigned int plane = N * N;  // distance from (i, j, k) to (i+1, j, k)
    const unsigned int lane = threadIdx.x % 32;
    unsigned int at = iStart * plane + j * N + k;
    Cells<T, W> prev{}, curr{};
    if (active) {
        prev = load_cells<W>(in + at - plane);
        curr = load_cells<W>(in + at);
    }
    for (unsigned int i = iStart; i < iEnd; ++i, at += plane) {
        Cells<T, W> next{}, down{}, up{}, u;
        if (active) {
            next = load_cells<W>(in + at + plane);
            down = load_cells<W>(in + at - N);
            up = load_cells<W>(in + at + N);
        }
        A left = __shfl_up_sync(0xffffffffu, curr.v[W - 1], 1);  // cell k-1, held by lane - 1
        A right = __shfl_down_sync(0xffffffffu, curr.v[0], 1);   // cell k+W, held by lane + 1
        if (lane == 0 && active && k > 0) left = to_arith(in[at - 1]);
        if (lane == 31 && active && k + W < N) right = to_arith(in[at + W]);
        // ---- EXERCISE 1 of 5: the explicit step u + r·(sum of the six neighbours - 6u) for each of the W cells ----
        for (int e = 0; e < W; ++e) {
            A west = e == 0 ? left : curr.v[e - 1];
            A east = e == W - 1 ? right : curr.v[e + 1];
            A sum = west + east + down.v[e] + up.v[e] + prev.v[e] + next.v[e];
            u.v[e] = curr.v[e] + r * (sum - A(6) * curr.v[e]);
        }
        // ---- END EXERCISE ----
        if (source != nullptr && active) {
            Cells<T, W> q = load_cells<W>(source + at);
            for (int e = 0; e < W; ++e) u.v[e] += q.v[e];
        }
        if (active) store_step(out, u, i, j, k, N, bc);
        prev = curr;
        curr = next;
    }
}

// 16-byte accesses when every row starts on a 16-byte boundary (N a multiple of W), else one cell.
template <class T> int vector_width(unsigned N) { return N % kWide<T> == 0 ? kWide<T> : 1; }

template <int W, class T>
Status launch(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    dim3 block(BLOCK_X, BLOCK_Y, 1);
    dim3 grid(ceil_div(N, W * BLOCK_X), ceil_div(N, BLOCK_Y), ceil_div(N - 2, Z_CHUNK));
    heat_step_kernel<W, T><<<grid, block, 0, s>>>(static_cast<const T*>(in), static_cast<T*>(out),
                                                  static_cast<const T*>(step.source), N, step.bc, Arith<T>(step.r));
    return cudaGetLastError();
}

Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    return with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        return vector_width<T>(N) == 1 ? launch<1, T>(in, out, N, step, s) : launch<kWide<T>, T>(in, out, N, step, s);
    });
}

Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result) {
    // ---- EXERCISE 5 of 5: the double-buffered loop: step from one grid into the other, then swap ----
    void* in = a;
    void* out = b;
    for (unsigned t = 0; t < steps; ++t) {
        Status e = launch_heat_step(in, out, N, step, s);
        if (e != cudaSuccess) return e;
        std::swap(in, out);  // the new state is the next step's input; no copy
    }
    *result = in;  // the newest state: b after an odd number of steps, a after an even one
    // ---- END EXERCISE ----
    return cudaSuccess;
}

KernelShape heat_kernel_shape(Precision p, unsigned N) {
    return with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        int w = vector_width<T>(N);
        const void* kernel = w == 1 ? reinterpret_cast<const void*>(heat_step_kernel<1, T>)
                                    : reinterpret_cast<const void*>(heat_step_kernel<kWide<T>, T>);
        return KernelShape{kernel, dim3(BLOCK_X, BLOCK_Y, 1), unsigned(w)};
    });
}

const HeatStageInfo kHeatStage = {"07_heat_equation", "The time loop: the heat equation"};
