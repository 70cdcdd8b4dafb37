// Stage 08 - beyond the book: temporal blocking. S steps of stage 07 for each trip through DRAM.
// Lesson: chapters/08_temporal_blocking/README.md
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
    // The block writes columns 1 + blockIdx·(TILE - 2S) onwards; its halo starts S before them
    // and may lie outside the grid.
    const int k = 1 + blockIdx.x * (TILE_X - 2 * S) + x - S;
    const int j = 1 + blockIdx.y * (TILE_Y - 2 * S) + y - S;
    const bool inside = j >= 0 && j < N && k >= 0 && k < N;
    const bool state = j >= 1 && j <= N - 2 && k >= 1 && k <= N - 2;  // the steps update it
    const bool writes = state && x >= S && x < TILE_X - S && y >= S && y < TILE_Y - S;
    // ---- END EXERCISE ----

    // The in-plane neighbours, as offsets in a TilePlane. A thread on the tile's edge has no
    // neighbour there: it uses itself, and its column is wrong from level 1 on (it is in the halo).
    const bool neumann = bc == Boundary::Neumann;
    int west = x == 0 ? 0 : -1, east = x == TILE_X - 1 ? 0 : 1;
    int down = y == 0 ? 0 : -TILE_X, up = y == TILE_Y - 1 ? 0 : TILE_X;
    // ---- EXERCISE 2 of 5: Neumann - across a face, the neighbour is the mirror ghost, which holds the cell itself ----
    if (neumann) {
        if (k == 1) west = 0;
        if (k == N - 2) east = 0;
        if (j == 1) down = 0;
        if (j == N - 2) up = 0;
    }
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
            const int p = t - s;
            const A* below = &tiles[s - 1][before][y][x];  // level s-1 of plane p: written one iteration ago
            const A c = q[s - 1][1];
            A u = c;  // ghosts keep their value (Dirichlet); planes outside 0..N-1 are never used
            if (state && p >= 1 && p <= N - 2) {
                const A prev = neumann && p == 1 ? c : q[s - 1][0];
                const A next = neumann && p == N - 2 ? c : q[s - 1][2];
                const A sum = below[west] + below[east] + below[down] + below[up] + prev + next;
                u = c + r * (sum - A(6) * c);
                if (source != nullptr) u += to_arith(source[p * plane + column]);
                u = stored<T>(u);
            }
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
                if (neumann) {
                    if (k == 1) cell[-1] = v;
                    if (k == N - 2) cell[1] = v;
                    if (j == 1) cell[-N] = v;
                    if (j == N - 2) cell[N] = v;
                    if (p == 1) cell[-plane] = v;
                    if (p == N - 2) cell[plane] = v;
                }
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
    const FusedSchedule schedule = fused_schedule(steps, step.fused_steps);
    void* in = a;
    void* out = b;
    for (unsigned n = 0; n < schedule.passes + schedule.single_steps; ++n) {
        Status e = n < schedule.passes ? launch_pass(in, out, N, step, s) : launch_heat_step(in, out, N, step, s);
        if (e != cudaSuccess) return e;
        std::swap(in, out);  // each pass writes the other grid
    }
    *result = in;
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
