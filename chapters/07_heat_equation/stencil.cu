// Stage 07 - beyond the book: the time loop. The heat equation with three boundary conditions.
// Lesson: chapters/07_heat_equation/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include <type_traits>
#include <utility>

#include "common/cuda_check.h"
#include "common/l2_planes.h"
#include "common/sm_threads.h"
#include "heat/cells.cuh"
#include "heat/stage.h"

// The sweep of stage 06, in any precision: a thread owns W neighbouring cells along k, loaded in
// one 16-byte access (4 floats, 2 doubles or 8 halves; fewer when N is not a multiple of W), and
// walks a chunk of planes along i (planes_for), its i-1 and i+1 cells in registers and its k-1 and
// k+W neighbours from the next lanes through shuffles.
// The shapes measured best on an H100 (see the lesson); try others with nvcc -DTRY_...=...
#ifndef TRY_BLOCK_X  // the aligned kernel's threads along k: 32, 16 or 8 (a warp spans 1, 2 or 4 rows)
#define TRY_BLOCK_X 16
#endif
#ifndef TRY_UNALIGNED_X  // the row kernel's threads along k (float and double; half takes the plane run)
#define TRY_UNALIGNED_X 32
#endif
#ifndef TRY_Z_CHUNK  // planes (i) per thread
#define TRY_Z_CHUNK 4
#endif
#ifndef TRY_SMALL_Z  // planes per thread where Z_CHUNK would outgrow the L2 (common/l2_planes.h)
#define TRY_SMALL_Z 2
#endif
#ifndef TRY_SHORT_Z  // planes per thread below N = TRY_SHORT_Z_BELOW
#define TRY_SHORT_Z 3
#endif
#ifndef TRY_SHORT_Z_BELOW
#define TRY_SHORT_Z_BELOW 384
#endif
#ifndef TRY_NEUMANN_RUN_IDLE  // float under Neumann boundaries: the plane run where the row kernel
#define TRY_NEUMANN_RUN_IDLE 20  // would idle this % of its lanes or more (0: always, 101: never)
#endif
#ifndef TRY_HALF_PLANE_RUN  // 1: half and bf16 take the plane run under Dirichlet boundaries where N % 8 = 0
#define TRY_HALF_PLANE_RUN 0  // too (half_plane_run; faster on an H200, not yet timed on an H100)
#endif
#ifndef TRY_HALF_CELLS  // half and bf16 cells per thread (8: one 16-byte access)
#define TRY_HALF_CELLS 8
#endif
#ifndef TRY_UNALIGNED_HALF_CELLS  // ... where rows start off 8-cell boundaries
#define TRY_UNALIGNED_HALF_CELLS 8
#endif
constexpr unsigned THREADS = 128;  // per block, in every kernel
// The aligned kernel's blocks: BLOCK_X threads along k by THREADS / BLOCK_X rows (half as wide
// where aligned_kernel_for says so). At 16, a warp covers 64 floats of two rows, so a row of N
// cells leaves less of its last warp idle than at 32.
constexpr unsigned BLOCK_X = TRY_BLOCK_X;
// The row kernel's threads along k; its rows per block are THREADS / that.
constexpr unsigned UNALIGNED_X = TRY_UNALIGNED_X;
constexpr unsigned Z_CHUNK = TRY_Z_CHUNK;
constexpr unsigned SMALL_Z = TRY_SMALL_Z;
constexpr unsigned SHORT_Z = TRY_SHORT_Z;
constexpr unsigned SHORT_Z_BELOW = TRY_SHORT_Z_BELOW;
// __launch_bounds__' minimum of blocks per SM: 12 (at most 40 registers a thread), but 8 (64
// registers) where a thread's cells need more: 8 halves, or the aligned kernel's doubles (at 12
// they spill). As many only where an SM holds them (common/sm_threads.h).
constexpr int fitting_blocks(int blocks) {
    return blocks * int(THREADS) <= SM_MAX_THREADS ? blocks : SM_MAX_THREADS / int(THREADS);
}
template <class T, int W, bool Aligned>
constexpr int kMinBlocks = fitting_blocks(W == 8 || (Aligned && sizeof(T) == 8) ? 8 : 12);

// Cells x..x+W-1 of one row: writes those that are state cells (1..N-2 along k), one 16-byte
// store when all of them are.
template <int W, class T>
__device__ void store_state_cells(T* row, const Cells<T, W>& u, unsigned int k, unsigned int N) {
    // ---- EXERCISE 2 of 5: Dirichlet - a step writes the state cells and leaves the ghosts ----
    // TODO: the ghost cells (k = 0 and k = N-1, and whole ghost rows and planes) hold the boundary
    // condition, and under Dirichlet boundaries nothing may change them. Store the cells k+e that
    // are state cells (1 <= k+e <= N-2) only: all W in one store_cells<W>(row + k, u) when all of
    // them are, else one by one with from_arith<T>(u.v[e]).
    store_cells<W>(row + k, u);
    // ---- END EXERCISE ----
}

// The boundary condition: along one axis, the state cell whose new value the ghost at index 0
// (low) or N-1 (high) takes. Dirichlet ghosts are never written.
__device__ unsigned int ghost_source(bool low, unsigned int N, Boundary bc) {
    if (bc == Boundary::Neumann) {
        // ---- EXERCISE 3 of 5: Neumann (zero flux) - each ghost mirrors the state cell next to it ----
        // TODO: zero flux through the face means the ghost equals the state cell next to it (the
        // face lies half-way between them). Which state cell does the low ghost (index 0) copy,
        // and which the high one (index N-1)?
        return 0;
        // ---- END EXERCISE ----
    }
    // ---- EXERCISE 4 of 5: periodic - each ghost copies the state cell on the far side ----
    // TODO: the domain wraps around: the neighbour of state cell 1 below it is the last state cell,
    // and the neighbour of the last state cell above it is cell 1. Careful: cell N-1 is a ghost.
    return 0;
    // ---- END EXERCISE ----
}

// The face ghosts whose values a thread has just computed (Neumann, periodic): where its cells
// include the source of its row's ghost at k = 0 or N-1, it writes that ghost (unless its caller
// wrote it with the cells: lowDone, highDone); where its row j is the source of a ghost row
// (j = 0 or N-1) of plane i, or its plane i the source of a ghost plane (i = 0 or N-1), it writes
// its cells there too, k = first..first+W-1 as the state cells among them. So every face ghost is
// written by the step itself, one pass, no kernel of its own.
template <int W, class T>
__device__ void store_face_ghosts(T* out, const Cells<T, W>& u, unsigned int i, unsigned int j, int first,
                                  unsigned int N, Boundary bc, bool lowDone = false, bool highDone = false) {
    const unsigned int low = ghost_source(true, N, bc), high = ghost_source(false, N, bc);
    auto put = [&](unsigned int gi, unsigned int gj) {
        T* row = out + (size_t(gi) * N + gj) * N;
        for (int e = 0; e < W; ++e)
            if (first + e >= 1 && first + e <= int(N) - 2) row[first + e] = from_arith<T>(u.v[e]);
    };
    auto holds = [&](unsigned int c) { return first <= int(c) && int(c) < first + W; };
    if (holds(low) || holds(high)) {  // two threads of a row: the others skip the loop
        T* row = out + (size_t(i) * N + j) * N;
        for (int e = 0; e < W; ++e) {
            if (first + e == int(low) && !lowDone) row[0] = from_arith<T>(u.v[e]);
            if (first + e == int(high) && !highDone) row[N - 1] = from_arith<T>(u.v[e]);
        }
    }
    if (j == low) put(i, 0);
    if (j == high) put(i, N - 1);
    if (i == low) put(0, j);
    if (i == high) put(N - 1, j);
}

// The explicit step for a thread's W cells along k: u + r·(sum of the six neighbours - 6u), from
// its cells (curr), the cells before and after them along k (left: cell k-1, right: cell k+W), and
// its neighbours along j (down, up) and i (prev, next). Both step kernels below use it.
template <class T, int W>
__device__ Cells<T, W> explicit_step(const Cells<T, W>& prev, const Cells<T, W>& curr, const Cells<T, W>& next,
                                     const Cells<T, W>& down, const Cells<T, W>& up, Arith<T> left, Arith<T> right,
                                     Arith<T> r) {
    using A = Arith<T>;
    Cells<T, W> u;
    // ---- EXERCISE 1 of 5: the explicit step u + r·(sum of the six neighbours - 6u) for each of the W cells ----
    // TODO: for each of the W cells e, the new value u.v[e] = u + r·(sum of its six neighbours - 6u).
    // Its neighbours along k are curr.v[e-1] and curr.v[e+1], except at the ends of the thread's
    // cells: `left` (cell k-1) and `right` (cell k+W). Along j: down.v[e] and up.v[e]; along i:
    // prev.v[e] and next.v[e]. Write it as u + r·(sum - 6u), not (1-6r)·u + r·sum: the small
    // difference is what matters, and half-precision storage keeps more of it this way.
    for (int e = 0; e < W; ++e) u.v[e] = curr.v[e];
    // ---- END EXERCISE ----
    return u;
}

// One step for the state cells (1..N-2 along each axis), and every face ghost: those at the two
// ends of each row (k = 0, N-1) share a 32-byte sector with cells this kernel writes anyway, and
// the ghost rows and planes are written by the threads that computed their values
// (store_face_ghosts), so no second kernel reads the new state back. WithSource adds source[cell]
// (Jacobi). Neumann boundaries have an instance of their own (IsNeumann), whose row ends are
// written whole; the others share one. BX threads along k (aligned_kernel_for says how many).
template <int W, class T, bool WithSource, bool IsNeumann, unsigned BX>
__global__ void __launch_bounds__(THREADS, (kMinBlocks<T, W, true>))
heat_step_kernel(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source, unsigned int N,
                 unsigned int zChunk, Boundary bc, Arith<T> r) {
    using A = Arith<T>;
    constexpr unsigned BY = THREADS / BX;
    unsigned int k = W * (blockIdx.x * BX + threadIdx.x);  // this thread's first cell along k
    unsigned int j = blockIdx.y * BY + threadIdx.y;
    unsigned int iStart = 1 + blockIdx.z * zChunk;
    unsigned int iEnd = min(iStart + zChunk, N - 1);
    bool active = j >= 1 && j <= N - 2 && k < N;  // no early return: every lane takes part in the shuffles

    const unsigned int plane = N * N;  // distance from (i, j, k) to (i+1, j, k)
    const unsigned int lane = threadIdx.x;  // in the warp's stretch of this row
    unsigned int at = iStart * plane + j * N + k;
    // Planes i-1 and i, kept as stored (half the registers for half and bf16) and widened for the
    // arithmetic.
    Stored<T, W> prevBits{}, currBits{};
    if (active) {
        prevBits = load_stored<W>(in + at - plane);
        currBits = load_stored<W>(in + at);
    }
    // Plane i+1 is loaded in the loop, unrolled by two. Loaded a plane ahead instead, it took more
    // registers than it gave (half at N = 512: 81.7% of a copy against 87.8%; lesson 07).
#pragma unroll 2
    for (unsigned int i = iStart; i < iEnd; ++i, at += plane) {
        Stored<T, W> nextBits{};
        Cells<T, W> down{}, up{};
        if (active) {
            nextBits = load_stored<W>(in + at + plane);
            down = load_cells<W>(in + at - N);
            up = load_cells<W>(in + at + N);
        }
        const Cells<T, W> prev = widen(prevBits), curr = widen(currBits), next = widen(nextBits);
        A left = __shfl_up_sync(0xffffffffu, curr.v[W - 1], 1, BX);  // cell k-1, held by lane - 1
        A right = __shfl_down_sync(0xffffffffu, curr.v[0], 1, BX);   // cell k+W, held by lane + 1
        if (lane == 0 && active && k > 0) left = to_arith(in[at - 1]);
        if (lane == BX - 1 && active && k + W < N) right = to_arith(in[at + W]);
        Cells<T, W> u = explicit_step<T, W>(prev, curr, next, down, up, left, right, r);
        if constexpr (WithSource) {
            if (active) {
                Cells<T, W> q = load_cells<W>(source + at);
                for (int e = 0; e < W; ++e) u.v[e] += q.v[e];
            }
        }
        if (active) {
            T* row = out + (i * N + j) * N;
            if constexpr (IsNeumann) {
                // A row's first (last) access holds its ghost at k = 0 (N-1) and the ghost's source,
                // the cell beside it: it is written whole, one store where the state cells alone take
                // W. With the boundary known at compile time, `low` and `high - k` are constants.
                const unsigned int low = ghost_source(true, N, Boundary::Neumann);
                const unsigned int high = ghost_source(false, N, Boundary::Neumann);
                const bool head = k == 0 && low < W, tail = k + W == N && N - 1 - high < W;
                if (head || tail) {
                    Cells<T, W> whole = u;
                    for (int e = 0; e < W; ++e) {
                        if (head && e == int(low)) whole.v[0] = u.v[e];
                        if (tail && e == W - 1 - int(N - 1 - high)) whole.v[W - 1] = u.v[e];
                    }
                    store_cells<W>(row + k, whole);
                } else {
                    store_state_cells(row, u, k, N);
                }
                store_face_ghosts(out, u, i, j, int(k), N, Boundary::Neumann, head, tail);
            } else {
                store_state_cells(row, u, k, N);
                if (bc == Boundary::Dirichlet) {  // the row's ghosts again, with their own value: sectors written whole
                    if (k == 0) row[0] = from_arith<T>(curr.v[0]);
                    if (k + W == N) row[N - 1] = from_arith<T>(curr.v[W - 1]);
                } else {
                    store_face_ghosts(out, u, i, j, int(k), N, bc);
                }
            }
        }
        prevBits = currBits;
        currBits = nextBits;
    }
}

// The W cells that start D cells into the aligned access lo and run on into the next one, hi.
template <int W, int D, class T>
__device__ Cells<T, W> shifted_cells(const Cells<T, W>& lo, const Cells<T, W>& hi) {
    Cells<T, W> c;
    for (int e = 0; e < W; ++e) c.v[e] = e + D < W ? lo.v[e + D] : hi.v[e + D - W];
    return c;
}

// Cells in[at..at+W-1] when `at` lies D cells past a W-aligned address: the two aligned accesses
// they straddle, and W of their 2W cells. An access that lies partly outside the grid holds no
// cell that is needed, so it is not made (`at` is signed: in a tiny grid it can lie before it).
template <int W, int D, class T>
__device__ Cells<T, W> load_shifted(const T* in, long long at, long long cells) {
    Cells<T, W> lo{}, hi{};
    if (at - D >= 0) lo = load_cells<W>(in + (at - D));
    if constexpr (D == 0) return lo;
    if (at - D + 2 * W <= cells) hi = load_cells<W>(in + (at - D + W));
    return shifted_cells<W, D>(lo, hi);
}

// load_cells<W>(p) through __ldg. Where only some of the cells are used, the compiler narrows a
// plain load to the words it uses, one 4-byte load each (16 loads a thread for half's shifted
// neighbours, against 8 through __ldg, which it narrows less).
template <int W, class T>
__device__ Cells<T, W> load_whole(const T* p) {
    if constexpr (kOneAccess<T, W>) {
        Stored<T, W> s;
        s.bits = __ldg(reinterpret_cast<const decltype(s.bits)*>(p));
        return widen(s);
    } else {
        return load_cells<W>(p);
    }
}

// The four neighbours of the W cells at `at` that lie off an aligned address: planes i-1 and
// i+1 (prev, next), rows j-1 and j+1 (down, up), for N % W = RN.
template <class T, int W> struct Around {
    Cells<T, W> prev, next, down, up;
};
template <int W, int RN, class T>
__device__ Around<T, W> load_around(const T* in, unsigned int at, unsigned int N) {
    constexpr int kUp = RN, kDown = (W - RN) % W, kNext = RN * RN % W, kPrev = (W - RN * RN % W) % W;
    const unsigned int plane = N * N;
    if (N >= 2 * W) {
        // No access leaves the grid: a thread's cells lie at most W - 1 cells off a state row, and its
        // shifted accesses reach at most W cells further, less than the ghost row (N cells) between
        // a state row's neighbours and the grid's ends. So no test.
        auto shifted = [&](auto d, unsigned int first) {  // first: cell at+-offset, d cells past an aligned address
            const Cells<T, W> lo = load_whole<W>(in + (first - d.value));
            if constexpr (d.value == 0) return lo;
            return shifted_cells<W, d.value>(lo, load_whole<W>(in + (first - d.value + W)));
        };
        return {shifted(std::integral_constant<int, kPrev>{}, at - plane), shifted(std::integral_constant<int, kNext>{}, at + plane),
                shifted(std::integral_constant<int, kDown>{}, at - N), shifted(std::integral_constant<int, kUp>{}, at + N)};
    }
    const long long cells = (long long)plane * N;
    return {load_shifted<W, kPrev>(in, (long long)at - plane, cells), load_shifted<W, kNext>(in, (long long)at + plane, cells),
            load_shifted<W, kDown>(in, (long long)at - N, cells), load_shifted<W, kUp>(in, (long long)at + N, cells)};
}

// For N % W = RN != 0, rows do not start on W-cell boundaries (stage 06's second kernel, in any
// precision), and two kernels share the work. Both give a thread the W cells of one aligned access
// (a row's first access starts up to W - 1 cells before it), so its own cells move in whole
// aligned loads and stores; its neighbours are RN (row j+1), W - RN (row j-1), RN² % W (plane i+1)
// and W - RN² % W (plane i-1) cells off an aligned address: load_around. Along i the cells shift
// with the rows, so nothing is kept in registers from one plane to the next (the L1 cache serves
// the repeats).
//
// The row kernel (float and double: periodic, and Neumann but where neumann_plane_run says): the
// threads of a block take rows, a row's accesses each. A thread whose cells are sources of face
// ghosts writes those ghosts (store_face_ghosts), as in the aligned kernel.
template <int W, int RN, class T, bool WithSource, unsigned BX>
__global__ void __launch_bounds__(THREADS, (kMinBlocks<T, W, false>))
heat_step_kernel_unaligned(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source,
                           unsigned int N, unsigned int zChunk, Boundary bc, Arith<T> r) {
    static_assert(sizeof(T) != 2, "half and bf16 take the plane run (half_plane_run)");
    using A = Arith<T>;
    const unsigned int plane = N * N, cells = plane * N;
    constexpr unsigned BY = THREADS / BX;  // BX threads along k
    const unsigned int t = blockIdx.x * BX + threadIdx.x;
    const unsigned int j = blockIdx.y * BY + threadIdx.y;
    const unsigned int iStart = 1 + blockIdx.z * zChunk;
    const unsigned int iEnd = min(iStart + zChunk, N - 1);
    const unsigned int lane = threadIdx.x;  // in the warp's stretch of this row
    const bool stateRow = j >= 1 && j <= N - 2;
    for (unsigned int i = iStart; i < iEnd; ++i) {
        const unsigned int row = (i * N + j) * N;          // cell (i, j, 0)
        const unsigned int at = row / W * W + W * t;       // this thread's cells at..at+W-1
        const int k = int(at) - int(row);                  // the first one's k; < 0 in the row before
        const bool inRow = stateRow && k + W - 1 >= 0 && k <= int(N) - 1;  // a cell of this row
        const bool active = stateRow && k + W - 1 >= 1 && k <= int(N) - 2;  // a state cell of it
        // Loads only where they are needed: in half the plane run loads a cell of the grid instead
        // (no zeroed cells), which lost up to 5 points here in float, where the L2 sets the pace.
        Cells<T, W> curr{};
        Around<T, W> a{};
        if (inRow) curr = load_cells<W>(in + at);
        if (active) a = load_around<W, RN>(in, at, N);
        A left = __shfl_up_sync(0xffffffffu, curr.v[W - 1], 1, BX);  // cell k-1, held by lane - 1
        A right = __shfl_down_sync(0xffffffffu, curr.v[0], 1, BX);   // cell k+W, held by lane + 1
        if (lane == 0 && active && k >= 1) left = to_arith(in[at - 1]);
        if (lane == BX - 1 && active && k + W <= int(N) - 1) right = to_arith(in[at + W]);
        Cells<T, W> u = explicit_step<T, W>(a.prev, curr, a.next, a.down, a.up, left, right, r);
        if constexpr (WithSource) {
            if (active) {
                Cells<T, W> q = load_shifted<W, 0>(source, at, cells);
                for (int e = 0; e < W; ++e) u.v[e] += q.v[e];
            }
        }
        if (!active) continue;
        // The row's state cells get the step; its ghosts (k = 0, N-1) come from store_face_ghosts.
        if (k >= 1 && k + W - 1 <= int(N) - 2) {
            store_cells<W>(out + at, u);
        } else {
            for (int e = 0; e < W; ++e)
                if (k + e >= 1 && k + e <= int(N) - 2) out[at + e] = from_arith<T>(u.v[e]);
        }
        store_face_ghosts(out, u, i, j, k, N, bc);
    }
}

// Neumann in the plane run: the thread's new cells u (cells at..at+W-1, the first in row j0,
// column k0) and the face ghosts whose sources they are. A row-end ghost lies among the cells of
// the run, so it must not be written with a stale value: it takes the new value of the cell beside
// it (its source), which this thread holds or a neighbour lane does (before: new cell at-1, after:
// new cell at+W), and the access is still written whole. Where that lane is in another warp, the
// source writes the ghost itself. Cells of the ghost rows (j = 0, N-1) at the run's ends are left
// to their sources; the ghost rows and planes are written by their sources cell by cell, as
// store_face_ghosts does: 2 rows of N and 2 planes of N.
template <int W, class T>
__device__ void store_neumann_run(T* out, Cells<T, W> u, Arith<T> before, Arith<T> after, unsigned int at,
                                  unsigned int i, int j0, int k0, unsigned int N, unsigned int lane) {
    const int n = int(N);
    const unsigned int low = ghost_source(true, N, Boundary::Neumann), high = ghost_source(false, N, Boundary::Neumann);
    // Cell p starts a row (row j0, or j0+1 where p > 0): cells p-1 (k = N-1) and p (k = 0) are
    // row-end ghosts where they lie among this thread's.
    const int p = k0 == 0 ? 0 : n - k0;
    const int jLast = p > 0 && p < W ? j0 + 1 : j0;
    // Most threads: cells of state rows that are no ghost row's source, in a plane that is no ghost
    // plane's source, and every row-end ghost's source in this warp.
    const bool simple = n >= 2 * W && j0 >= 2 && jLast <= n - 3 && i != low && i != high &&
                        !(lane == 0 && (p == 1 || k0 == 1)) && !(lane == 31 && (p == W - 1 || k0 + W - 1 == n - 2));
    const Cells<T, W> v = u;
    if (simple) {
        for (int e = 0; e < W; ++e) {
            if (e == p) u.v[e] = e < W - 1 ? v.v[e + 1] : after;   // k = 0: the new cell k = 1
            if (e == p - 1) u.v[e] = e > 0 ? v.v[e - 1] : before;  // k = N-1: the new cell k = N-2
        }
        store_cells<W>(out + at, u);
        return;
    }
    unsigned int written = 0;  // bit e: cell at+e is in the store below
    for (int e = 0, j = j0, k = k0; e < W; ++e) {
        const unsigned int cell = at + e;
        if (j >= 1 && j <= n - 2) {  // a cell of a state row (not of a ghost row, nor of the planes beside)
            if (k >= 1 && k <= n - 2) {
                written |= 1u << e;
                const T x = from_arith<T>(v.v[e]);
                if (unsigned(j) == low) out[cell - j * N] = x;             // ghost row 0
                if (unsigned(j) == high) out[cell + (n - 1 - j) * N] = x;  // ghost row N-1
                if (i == low) out[cell - i * N * N] = x;                   // ghost plane 0
                if (i == high) out[cell + (N - 1 - i) * N * N] = x;        // ghost plane N-1
                // The ghost beside it lies in a lane of another warp: written from here.
                if (k == 1 && e == 0 && lane == 0) out[cell - 1] = x;
                if (k == n - 2 && e == W - 1 && lane == 31) out[cell + 1] = x;
            } else {  // a row-end ghost: the new cell beside it, unless that lies in another warp
                if (k == 0 && (e < W - 1 || lane < 31)) {
                    u.v[e] = e < W - 1 ? v.v[e + 1] : after;
                    written |= 1u << e;
                }
                if (k == n - 1 && (e > 0 || lane > 0)) {
                    u.v[e] = e > 0 ? v.v[e - 1] : before;
                    written |= 1u << e;
                }
            }
        }
        if (++k == n) k = 0, ++j;
    }
    if (written == (1u << W) - 1) {
        store_cells<W>(out + at, u);
    } else {
        for (int e = 0; e < W; ++e)
            if (written >> e & 1) out[at + e] = from_arith<T>(u.v[e]);
    }
}

// Bit e: cell e of the W cells whose first lies in row j0, column k0 of a plane is a ghost (row
// or column 0 or N-1). Where N >= W they straddle at most two rows: cells e < p = N - k0 lie in
// row j0 (the last of them at k = N-1), the others in row j0 + 1 (the first at k = 0).
template <int W>
__device__ unsigned int ghost_cells(int j0, int k0, int n) {
    unsigned int ghosts = 0;
    if (n < W) {  // a tiny grid: cell by cell
        for (int e = 0, j = j0, k = k0; e < W; ++e) {
            if (j < 1 || j > n - 2 || k < 1 || k > n - 2) ghosts |= 1u << e;
            if (++k == n) k = 0, ++j;
        }
        return ghosts;
    }
    constexpr unsigned int all = (1u << W) - 1;
    const int p = n - k0;
    const unsigned int firstRow = (1u << min(p, W)) - 1;
    const auto ghostRow = [n](int j) { return unsigned(j - 1) > unsigned(n - 3); };  // j < 1 or j > n-2
    if (ghostRow(j0)) ghosts |= firstRow;
    if (ghostRow(j0 + 1)) ghosts |= ~firstRow;
    if (k0 == 0) ghosts |= 1;                // k = 0
    if (p <= W) ghosts |= 3u << (p - 1);     // k = N-1, and k = 0 of the next row
    return ghosts & all;
}

// The plane run (Dirichlet; Neumann in float where neumann_plane_run says; every boundary condition
// in half and bf16, as Dirichlet's, then copy_face_ghosts): the threads take a
// plane's rows 1..N-2 as one run of accesses, thread c of a plane the cells at..at+W-1,
// at = (the run's start rounded down to W) + W·c. No lane idles at the end of a row (a row of
// N = 257 floats is 65 accesses: the row kernel's 96 threads leave a third idle). A thread's cells
// may straddle two rows (more where N < W): it finds the first one's row and column (one division,
// then per plane a step back) and which of its cells are ghosts (ghost_cells). Dirichlet ghosts
// keep their own value, and every access is written whole (whole 32-byte sectors). Neumann's
// row-end ghosts take the new cell beside them (store_neumann_run). Periodic ghosts lie at the
// row's far end: in float and double the row kernel was faster there (lesson 07).
template <int W, int RN, class T, bool WithSource, Boundary BC>
__global__ void __launch_bounds__(THREADS, (kMinBlocks<T, W, false>))
heat_step_kernel_plane_run(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source,
                           unsigned int N, unsigned int zChunk, Arith<T> r) {
    static_assert(BC != Boundary::Periodic, "periodic boundaries take the row kernel");
    using A = Arith<T>;
    const unsigned int c = blockIdx.x * THREADS + threadIdx.x;  // this thread's access in a plane's run
    const unsigned int iStart = 1 + blockIdx.y * zChunk;
    const unsigned int iEnd = min(iStart + zChunk, N - 1);
    const unsigned int lane = threadIdx.x % 32;
    // Row j0 and column k0 of the thread's first cell, in plane i: at - i·N² = N - m + W·c, m the
    // run's start mod W (a plane's start moves by N² mod W cells from plane to plane). So one
    // division here, and per plane a step back of up to W - 1 cells (into the row before, or for
    // N < W, into rows before; j0 < 0: plane i-1).
    const int n = int(N), jc = (n + int(W * c)) / n, kc = (n + int(W * c)) % n;  // where m = 0
    for (unsigned int i = iStart; i < iEnd; ++i) {
        const unsigned int first = (i * N + 1) * N, end = (i * N + N - 1) * N;  // cells (i, 1, 0), (i, N-1, 0)
        const unsigned int m = first % W;
        const unsigned int at = first - m + W * c;  // this thread's cells at..at+W-1
        const bool inRun = at < end;
        int j0 = jc, k0 = kc - int(m);
        if (k0 < 0) {  // the row before (a tiny grid, N < W: rows before, j0 < 0 in plane i-1)
            const int rel = jc * n + k0;
            j0 = n >= int(W) ? jc - 1 : rel >= 0 ? rel / n : -1 - (-rel - 1) / n;
            k0 = rel - j0 * n;
        }
        // Where N >= 2W a thread past the run loads the run's first access instead (what it computes
        // is not stored), so no cells are zeroed.
        Cells<T, W> curr;
        Around<T, W> a;
        if (N >= 2 * W) {
            const unsigned int from = inRun ? at : first - m;
            curr = load_cells<W>(in + from);
            a = load_around<W, RN>(in, from, N);
        } else {
            curr = inRun ? load_cells<W>(in + at) : Cells<T, W>{};
            a = inRun ? load_around<W, RN>(in, at, N) : Around<T, W>{};
        }
        A left = __shfl_up_sync(0xffffffffu, curr.v[W - 1], 1);  // cell at-1, held by lane - 1
        A right = __shfl_down_sync(0xffffffffu, curr.v[0], 1);   // cell at+W, held by lane + 1
        if (lane == 0 && inRun) left = to_arith(in[at - 1]);
        if (lane == 31 && inRun) right = to_arith(in[at + W]);
        Cells<T, W> u = explicit_step<T, W>(a.prev, curr, a.next, a.down, a.up, left, right, r);
        if constexpr (WithSource) {
            if (inRun) {
                Cells<T, W> q = load_cells<W>(source + at);
                for (int e = 0; e < W; ++e) u.v[e] += q.v[e];
            }
        }
        if constexpr (BC == Boundary::Dirichlet) {
            if (!inRun) continue;
            const unsigned int ghosts = ghost_cells<W>(j0, k0, n);  // they keep their own value
            for (int e = 0; e < W; ++e)
                if (ghosts >> e & 1) u.v[e] = curr.v[e];
            store_cells<W>(out + at, u);
        } else {
            const A before = __shfl_up_sync(0xffffffffu, u.v[W - 1], 1);  // new cell at-1, from lane - 1
            const A after = __shfl_down_sync(0xffffffffu, u.v[0], 1);     // new cell at+W, from lane + 1
            if (!inRun) continue;
            store_neumann_run<W>(out, u, before, after, at, i, j0, k0, N, lane);
        }
    }
}

// Cells per thread: the widest access that every row start is aligned to (N a multiple of W).
template <class T> constexpr int kWide = sizeof(T) == 2 ? TRY_HALF_CELLS : 16 / sizeof(T);
// Cells per thread in the unaligned kernel (rows off kWide-cell boundaries): one aligned access.
template <class T> constexpr int kUnaligned = sizeof(T) == 2 ? TRY_UNALIGNED_HALF_CELLS : kWide<T>;
template <class T> int vector_width(unsigned N) {
    return N % kWide<T> == 0 ? kWide<T> : kWide<T> > 4 && N % 4 == 0 ? 4 : 1;
}

template <int W, class T, bool WithSource>
Status launch(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s);

// Calls f with the cell count W that vector_width<T>(N) chooses, as a compile-time constant.
template <class T, class F> auto with_width(unsigned N, F f) {
    int w = vector_width<T>(N);
    if (w == kWide<T>) return f(std::integral_constant<int, kWide<T>>{});
    if (w == 4) return f(std::integral_constant<int, 4>{});
    return f(std::integral_constant<int, 1>{});
}

// The aligned kernel's threads along k for a row of `accesses` (N / W) accesses, in blocks of `wide`
// threads: for half and bf16 half as many where that leaves fewer lanes idle at a row's end. Where
// narrow blocks take an odd number of blocks for a row, blocks twice as wide leave half of their
// last one idle (lesson 07 measures it).
template <class T> unsigned threads_along_k(unsigned accesses, unsigned wide) {
    return sizeof(T) == 2 && ceil_div(accesses, wide / 2) % 2 == 1 ? wide / 2 : wide;
}
// The row kernel's instance for N % kUnaligned<T> = RN and its threads along k (the launcher and
// heat_kernel_shape both take them from here).
template <int RN, class T, bool WithSource>
auto row_kernel_for() {
    return std::make_pair(heat_step_kernel_unaligned<kUnaligned<T>, RN, T, WithSource, UNALIGNED_X>, UNALIGNED_X);
}

// Float under Neumann boundaries: the plane run where the row kernel would leave a fifth of its
// lanes or more idle at a row's end (N = 257: 65 accesses for 96 lanes, a third idle), else the row
// kernel. The plane run idles no lane, but each access costs it more (a ghost among its cells, the
// row and column of its first cell). On an H100 it was faster at N = 257-290 and 385-386 (a quarter
// or a third of the row kernel's lanes idle), level at 383 and 415-418, slower at 319-354 and from
// 447 on (a fifth or less; lesson 07).
template <class T> bool neumann_plane_run(unsigned N) {
    constexpr unsigned U = kUnaligned<T>;
    const unsigned accesses = ceil_div(N + U - 1, U), bx = UNALIGNED_X;
    const unsigned lanes = ceil_div(accesses, bx) * bx;
    return 100 * (lanes - accesses) >= unsigned(TRY_NEUMANN_RUN_IDLE) * lanes;
}

// Half and bf16 take the plane run wherever N is no multiple of 8 (lesson 07 measures it on an
// H200): in place of the aligned kernel's 8-byte accesses where N % 8 = 4, and under Neumann and
// periodic boundaries of the row kernel, there with a second kernel for the face ghosts
// (copy_face_ghosts). With TRY_HALF_PLANE_RUN also under Dirichlet boundaries where N % 8 = 0, in
// place of the aligned kernel's 16-byte accesses: faster on an H200 too, but not the default, as on
// an H100 that aligned kernel keeps the L2 at 94% of its peak, and the plane run reads more from it.
template <class T> constexpr bool kHalfPlaneRun = sizeof(T) == 2;
template <class T> bool half_plane_run(unsigned N, Boundary bc) {
    return kHalfPlaneRun<T> && (N % kUnaligned<T> != 0 || (TRY_HALF_PLANE_RUN && bc == Boundary::Dirichlet));
}

// The face ghosts of a new state that a kernel wrote only the state cells of (the plane run under
// Neumann and periodic boundaries, half_plane_run): each takes its source's new value
// (ghost_source), face by face.
// blockIdx.z is the axis (0: i, 1: j, 2: k), and thread (a, b) copies the low and the high ghost
// of the face's cell a, b (both 1..N-2): no ghost is another's source, so no order is needed.
template <class T>
__global__ void copy_face_ghosts(T* out, unsigned int N, Boundary bc) {
    const unsigned int b = 1 + blockIdx.x * blockDim.x + threadIdx.x, a = 1 + blockIdx.y;
    if (b > N - 2) return;
    const unsigned int low = ghost_source(true, N, bc), high = ghost_source(false, N, bc);
    // The cells along the axis through (a, b): cell x of them is line[x * step].
    const size_t plane = size_t(N) * N;
    T* line;
    size_t step;
    if (blockIdx.z == 0) {
        line = out + size_t(a) * N + b, step = plane;  // cells (x, a, b)
    } else if (blockIdx.z == 1) {
        line = out + a * plane + b, step = N;  // (a, x, b)
    } else {
        line = out + a * plane + size_t(b) * N, step = 1;  // (a, b, x)
    }
    // Both sources are loaded before either ghost is stored: no ghost is a source, but the
    // compiler cannot know, and would otherwise wait for the first store before the second load.
    const T fromLow = line[low * step], fromHigh = line[high * step];
    line[0] = fromLow;
    line[(N - 1) * step] = fromHigh;
}

// The unaligned kernel for N % kUnaligned<T> = RN (RN a compile-time constant) and the boundary
// condition, and its block: the plane run for Dirichlet (and Neumann in float where
// neumann_plane_run says; every boundary condition in half and bf16, then copy_face_ghosts), the
// row kernel for the others. The launcher and heat_kernel_shape both take it from here.
template <int RN, class T, bool WithSource>
auto unaligned_kernel_for(unsigned N, Boundary bc) {
    using Kernel = void (*)(const T*, T*, const T*, unsigned, unsigned, Boundary, Arith<T>);
    using RunKernel = void (*)(const T*, T*, const T*, unsigned, unsigned, Arith<T>);
    struct Choice {
        RunKernel run;  // the plane run, or nullptr for the row kernel
        Kernel row;
        unsigned bx;    // the row kernel's threads along k
        bool ghostPass = false;  // the face ghosts are copied after the step (copy_face_ghosts)
    };
    constexpr int U = kUnaligned<T>;
    if (bc == Boundary::Dirichlet)
        return Choice{heat_step_kernel_plane_run<U, RN, T, WithSource, Boundary::Dirichlet>, nullptr, 0};
    if constexpr (kHalfPlaneRun<T>) {  // its face ghosts then copied by a second kernel
        return Choice{heat_step_kernel_plane_run<U, RN, T, WithSource, Boundary::Dirichlet>, nullptr, 0, true};
    } else {
        if constexpr (sizeof(T) == 4)
            if (bc == Boundary::Neumann && neumann_plane_run<T>(N))
                return Choice{heat_step_kernel_plane_run<U, RN, T, WithSource, Boundary::Neumann>, nullptr, 0};
        const auto [kernel, bx] = row_kernel_for<RN, T, WithSource>();
        return Choice{nullptr, kernel, bx};
    }
}

// The unaligned kernels for N % kUnaligned<T> = RN: unaligned_kernel_for's choice (RN from 0 where
// half_plane_run says so).
template <class T, bool WithSource, int RN = 1>
void launch_unaligned(const T* in, T* out, const T* source, unsigned N, unsigned z, const HeatStep& step,
                      cudaStream_t s) {
    if constexpr (RN < kUnaligned<T>) {
        if (N % kUnaligned<T> != RN) return launch_unaligned<T, WithSource, RN + 1>(in, out, source, N, z, step, s);
        constexpr unsigned U = kUnaligned<T>;
        const auto choice = unaligned_kernel_for<RN, T, WithSource>(N, step.bc);
        if (choice.run != nullptr) {
            const unsigned run = ((N - 2) * N + U - 1) / U + 1;  // accesses a plane's run takes, at most
            dim3 grid(ceil_div(run, THREADS), ceil_div(N - 2, z), 1);
            choice.run<<<grid, THREADS, 0, s>>>(in, out, source, N, z, Arith<T>(step.r));
            if constexpr (kHalfPlaneRun<T>) {
                if (choice.ghostPass)  // (N - 2)² cells on each of three axes, two ghosts each
                    copy_face_ghosts<<<dim3(ceil_div(N - 2, THREADS), N - 2, 3), THREADS, 0, s>>>(out, N, step.bc);
            }
        } else {
            dim3 block(choice.bx, THREADS / choice.bx, 1);
            dim3 grid(ceil_div(N + U - 1, U * choice.bx), ceil_div(N, THREADS / choice.bx), ceil_div(N - 2, z));
            choice.row<<<grid, block, 0, s>>>(in, out, source, N, z, step.bc, Arith<T>(step.r));
        }
    }
}

// The aligned kernel's instance for N and the boundary condition, and its threads along k (the
// launcher and heat_kernel_shape both take them from here): threads_along_k for half and bf16 in
// 16-byte accesses; with 8-byte ones (N % 8 = 4) narrow blocks lost (lesson 07), so BLOCK_X.
template <int W, class T, bool WithSource>
auto aligned_kernel_for(unsigned N, Boundary bc) {
    constexpr unsigned wide = BLOCK_X, narrow = BLOCK_X / 2;
    // The instance for BX threads along k (a compile-time constant) and this boundary condition.
    auto instance = [&](auto bx) {
        return std::make_pair(bc == Boundary::Neumann ? heat_step_kernel<W, T, WithSource, true, bx.value>
                                                      : heat_step_kernel<W, T, WithSource, false, bx.value>,
                              bx.value);
    };
    if constexpr (sizeof(T) == 2 && W * sizeof(T) == 16)
        if (threads_along_k<T>(N / W, wide) == narrow) return instance(std::integral_constant<unsigned, narrow>{});
    return instance(std::integral_constant<unsigned, wide>{});
}

// Planes per thread for N: Z_CHUNK, SMALL_Z where a chunk of Z_CHUNK would outgrow the L2
// (common/l2_planes.h), and SHORT_Z below N = SHORT_Z_BELOW, where a step is short (50-170 us in
// float on an H100): there chunks of 3 planes measured faster than 4 at N = 258 (by 2.5-3.8 points
// of a copy, every boundary condition and precision) and 289-290, and level elsewhere (lesson 07).
template <class T> unsigned planes_for(unsigned N) {
    return N < SHORT_Z_BELOW ? SHORT_Z : planes_per_thread(N, sizeof(T), Z_CHUNK, SMALL_Z);
}

template <int W, class T, bool WithSource>
Status launch(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    const T* from = static_cast<const T*>(in);
    const T* source = static_cast<const T*>(step.source);
    const unsigned z = planes_for<T>(N);
    if constexpr (W == 1) {  // rows off W-cell boundaries: each thread takes one aligned access
        launch_unaligned<T, WithSource>(from, static_cast<T*>(out), source, N, z, step, s);
    } else {
        if constexpr (kHalfPlaneRun<T>) {
            if (half_plane_run<T>(N, step.bc)) {  // the plane run, for N % 8 = RN = 0 or 4
                launch_unaligned<T, WithSource, 0>(from, static_cast<T*>(out), source, N, z, step, s);
                return cudaGetLastError();
            }
        }
        const auto [kernel, bx] = aligned_kernel_for<W, T, WithSource>(N, step.bc);
        dim3 block(bx, THREADS / bx, 1);
        dim3 grid(ceil_div(N, W * bx), ceil_div(N, THREADS / bx), ceil_div(N - 2, z));
        kernel<<<grid, block, 0, s>>>(from, static_cast<T*>(out), source, N, z, step.bc, Arith<T>(step.r));
    }
    return cudaGetLastError();
}

Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    return with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        return with_width<T>(N, [&](auto w) {
            return step.source != nullptr ? launch<w.value, T, true>(in, out, N, step, s)
                                          : launch<w.value, T, false>(in, out, N, step, s);
        });
    });
}

Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result) {
    // ---- EXERCISE 5 of 5: the double-buffered loop: step from one grid into the other, then swap ----
    // TODO: keep two pointers, in = a and out = b. For each step, launch_heat_step(in, out, ...)
    // (return its error if it fails), then swap the pointers so that the new state is the next
    // step's input. Never copy a grid.
    // Set *result to the buffer that holds the final state, for odd and even step counts (and 0).
    *result = a;
    // ---- END EXERCISE ----
    return cudaSuccess;
}

KernelShape heat_kernel_shape(const HeatStep& step, unsigned N) {
    return with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        auto unaligned = [&] {  // an unaligned kernel: each RN's instance has the same resources
            const auto choice = unaligned_kernel_for<1, T, false>(N, step.bc);
            if (choice.run != nullptr)
                return KernelShape{reinterpret_cast<const void*>(choice.run), dim3(THREADS, 1, 1), unsigned(kUnaligned<T>)};
            return KernelShape{reinterpret_cast<const void*>(choice.row), dim3(choice.bx, THREADS / choice.bx, 1),
                               unsigned(kUnaligned<T>)};
        };
        return with_width<T>(N, [&](auto w) {
            if constexpr (w.value == 1) {
                return unaligned();
            } else {
                if (half_plane_run<T>(N, step.bc)) return unaligned();
                const auto [kernel, bx] = aligned_kernel_for<w.value, T, false>(N, step.bc);
                return KernelShape{reinterpret_cast<const void*>(kernel), dim3(bx, THREADS / bx, 1), unsigned(w.value)};
            }
        });
    });
}

const HeatStageInfo kHeatStage = {"07_heat_equation", "The time loop: the heat equation"};
