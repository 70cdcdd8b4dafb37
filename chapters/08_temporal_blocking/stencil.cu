// Stage 08 - beyond the book: temporal blocking. S steps of stage 07 for each trip through DRAM.
// Lesson: chapters/08_temporal_blocking/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include <type_traits>
#include <utility>

#include "cells.cuh"
#include "cuda_check.h"
#include "heat_stage.h"

// A block owns a tile of TILE_Y × TILE_X columns (j, k), one thread per column, and streams the
// tile along i. "Level s" of a plane is that plane after s steps. A column's level s needs level
// s-1 of its four in-plane neighbours, so after s levels only the columns at least s from the
// tile's edge are right: the block writes the (TILE_Y - 2S) × (TILE_X - 2S) columns in the middle
// and computes a halo of S columns around them that its neighbours write.
#ifndef TRY_TILE_Y  // the shape measured best on an H100 (see the lesson); try others with nvcc -DTRY_...
#define TRY_TILE_Y 32
#define TRY_AHEAD 2
#define TRY_MIN_BLOCKS 1
#endif
constexpr int TILE_X = 32;          // columns along k: one warp per row
constexpr int TILE_Y = TRY_TILE_Y;  // rows along j
constexpr int AHEAD = TRY_AHEAD;    // planes loaded ahead of the one used: their trip from DRAM overlaps the levels
constexpr int MAX_FUSED = 8;        // the kernels for S = 1..8 are compiled

// The value a cell stores, back in the arithmetic type: every level is rounded as a single step
// of stage 07 rounds it, so S fused steps compute exactly what S single steps compute.
template <class T> __device__ Arith<T> stored(Arith<T> u) { return to_arith(from_arith<T>(u)); }

// Level s-1 of one plane, as a block keeps it in shared memory.
template <class A> using TilePlane = A[TILE_Y][TILE_X];

// S steps in one pass: reads `in` once, writes `out` once. source (null: none) is added at each
// step (Jacobi).
template <int S, class T>
__global__ void __launch_bounds__(TILE_X * TILE_Y, TRY_MIN_BLOCKS)
fused_steps_kernel(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source, int N, Boundary bc,
                   Arith<T> r) {
    using A = Arith<T>;
    extern __shared__ unsigned char shared_bytes[];
    // tiles[s][b]: level s of a plane (s = 0..S-1), two buffers b so that level s can write the
    // plane it computes now while level s+1 still reads the one it computed before.
    auto tiles = reinterpret_cast<TilePlane<A>(*)[2]>(shared_bytes);
    const int x = threadIdx.x, y = threadIdx.y;

    // ---- EXERCISE 1 of 5: the halo - this thread's column, and whether the block writes it ----
    // TODO: this thread's column (j, k), and what it is. The block writes the columns from
    // 1 + blockIdx.x·(TILE_X - 2S) on along k (likewise along j with blockIdx.y and TILE_Y); its
    // halo starts S columns before them, so thread x = S sits on the first column it writes.
    // inside: 0 <= j, k <= N-1. state: 1 <= j, k <= N-2. writes: a state column with
    // S <= x < TILE_X - S and S <= y < TILE_Y - S.
    const int k = x;
    const int j = y;
    const bool inside = false;
    const bool state = false;
    const bool writes = false;
    // ---- END EXERCISE ----

    // The in-plane neighbours, as offsets in a TilePlane. A thread on the tile's edge has no
    // neighbour there: it uses itself, and its column is wrong from level 1 on (it is in the halo).
    const bool neumann = bc == Boundary::Neumann;
    int west = x == 0 ? 0 : -1, east = x == TILE_X - 1 ? 0 : 1;
    int down = y == 0 ? 0 : -TILE_X, up = y == TILE_Y - 1 ? 0 : TILE_X;
    // ---- EXERCISE 2 of 5: Neumann - across a face, the neighbour is the mirror ghost, which holds the cell itself ----
    // TODO: under Neumann boundaries the ghost beyond a face mirrors the state cell next to it,
    // so for a cell on a face (k = 1, k = N-2, j = 1 or j = N-2) that neighbour is the cell
    // itself: set the matching offset to 0.
    // ---- END EXERCISE ----

    const size_t plane = size_t(N) * N;                    // distance from (i, j, k) to (i+1, j, k)
    const size_t column = inside ? size_t(j) * N + k : 0;  // (0, j, k)
    A q[S][3] = {};  // q[s]: this column's level s in planes p-1, p, p+1, where level s+1 computes p next
    A ahead[AHEAD + 1];  // planes t..t+AHEAD of this column, as loaded from DRAM
    for (int a = 0; a <= AHEAD; ++a) ahead[a] = a < N && inside ? to_arith(in[a * plane + column]) : A(0);

    // Iteration t takes plane t from DRAM, and level s computes plane t - s: a wavefront along i.
    for (int t = 0; t < N - 1 + S; ++t) {
        const int now = t % 2, before = 1 - now;
        q[0][0] = q[0][1];
        q[0][1] = q[0][2];
        q[0][2] = ahead[0];
        for (int a = 0; a < AHEAD; ++a) ahead[a] = ahead[a + 1];
        const int load = t + 1 + AHEAD;
        ahead[AHEAD] = load < N && inside ? to_arith(in[load * plane + column]) : A(0);
        tiles[0][now][y][x] = q[0][2];
#pragma unroll
        for (int s = 1; s <= S; ++s) {
            // ---- EXERCISE 3 of 5: the wavefront - level s of plane p from level s-1 of planes p-1, p, p+1 ----
            // TODO: level s of plane p = t - s, from level s-1. The centre c and the i-1 and i+1
            // neighbours are q[s-1][1], q[s-1][0] and q[s-1][2]; the in-plane ones are in
            // tiles[s-1][before] (written one iteration ago) at offsets west, east, down and up
            // from [y][x]. A state column in a state plane (1 <= p <= N-2) takes stage 07's
            // update, plus the source when there is one, rounded with stored<T>(u); under
            // Neumann, plane 1's i-1 neighbour and plane N-2's i+1 neighbour are c itself.
            // Everything else keeps c.
            const int p = t - s;
            const A c = q[s - 1][1];
            A u = c;
            // ---- END EXERCISE ----
            if (s < S) {
                q[s][0] = q[s][1];
                q[s][1] = q[s][2];
                q[s][2] = u;
                tiles[s][now][y][x] = u;
            } else if (writes && p >= 1 && p <= N - 2) {
                T* cell = out + p * plane + column;
                const T v = from_arith<T>(u);
                *cell = v;
                // ---- EXERCISE 4 of 5: Neumann - the ghosts on the faces mirror the new state ----
                // TODO: under Neumann boundaries a cell next to a face also writes the ghost
                // beyond it: cell[-1] for k = 1, cell[1] for k = N-2, cell[-N] and cell[N] for
                // j = 1 and N-2, cell[-plane] and cell[plane] for p = 1 and N-2.
                // ---- END EXERCISE ----
            }
        }
        __syncthreads();  // this iteration's planes are complete before the next one reads them
    }
}

template <int S, class T> constexpr size_t kSharedBytes = size_t(S) * 2 * sizeof(TilePlane<Arith<T>>);

// More than 48 KiB of shared memory per block must be asked for, once per kernel.
template <int S, class T> Status allow_shared_memory() {
    static const Status e = cudaFuncSetAttribute(fused_steps_kernel<S, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(kSharedBytes<S, T>));
    return e;
}

// Calls f with S as a compile-time constant (S > MAX_FUSED, which the harness refuses, runs MAX_FUSED).
template <int S = 1, class F> auto with_fused_steps(unsigned fused, F f) {
    if constexpr (S < MAX_FUSED)
        if (fused != unsigned(S)) return with_fused_steps<S + 1>(fused, f);
    return f(std::integral_constant<int, S>{});
}

// One pass of step.fused_steps steps from `in` into `out`.
Status launch_pass(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    return with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        return with_fused_steps(step.fused_steps, [&](auto fused) {
            constexpr int S = fused.value;
            if (Status e = allow_shared_memory<S, T>(); e != cudaSuccess) return e;
            dim3 block(TILE_X, TILE_Y, 1);
            dim3 grid(ceil_div(N - 2, TILE_X - 2 * S), ceil_div(N - 2, TILE_Y - 2 * S), 1);
            fused_steps_kernel<S, T><<<grid, block, kSharedBytes<S, T>, s>>>(
                static_cast<const T*>(in), static_cast<T*>(out), static_cast<const T*>(step.source), int(N), step.bc,
                Arith<T>(step.r));
            return cudaGetLastError();
        });
    });
}

Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    HeatStep one = step;
    one.fused_steps = 1;
    return launch_pass(in, out, N, one, s);
}

Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result) {
    // ---- EXERCISE 5 of 5: the host loop - passes of S steps, then the rest one step at a time ----
    // TODO: fused_schedule(steps, step.fused_steps) says how many passes of S steps
    // (launch_pass) and single steps (launch_heat_step) make `steps`. Run the passes, then the
    // single steps, each from one grid into the other, swapping the two after each; set *result
    // to the grid that holds the newest state.
    (void)b;
    (void)steps;
    *result = a;
    // ---- END EXERCISE ----
    return cudaSuccess;
}

KernelShape heat_kernel_shape(const HeatStep& step, unsigned N) {
    (void)N;
    return with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        return with_fused_steps(step.fused_steps, [&](auto fused) {
            constexpr int S = fused.value;
            CUDA_CHECK((allow_shared_memory<S, T>()));
            return KernelShape{reinterpret_cast<const void*>(fused_steps_kernel<S, T>), dim3(TILE_X, TILE_Y, 1), 1,
                               kSharedBytes<S, T>, unsigned(TILE_Y - 2 * S), unsigned(TILE_X - 2 * S)};
        });
    });
}

const HeatStageInfo kHeatStage = {"08_temporal_blocking", "Temporal blocking: S steps per trip through memory",
                                  MAX_FUSED, false};
