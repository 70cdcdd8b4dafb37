// Stage 08 - beyond the book: temporal blocking. S steps of stage 07 for each trip through DRAM.
// Lesson: chapters/08_temporal_blocking/README.md
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "heat/cells.cuh"
#include "common/cuda_check.h"
#include "common/device_attribute.h"
#include "common/resident_blocks.h"
#include "heat/stage.h"

// A block owns a tile of TILE_Y rows (j) × 32·W columns (k) and streams it along i through a
// chunk of planes. Each thread owns ROWS × W cells of the tile: ROWS neighbouring rows of W
// neighbouring cells, so most of its neighbours are its own, in registers. "Level s" of a plane
// is that plane after s steps. Level s of a cell needs level s-1 of its neighbours, so after s
// levels only the cells at least s from the tile's edge are right: the block computes a halo of
// at least S cells around the cells it writes, which its neighbours write.
#ifndef TRY_ROWS  // the shape measured best on an H100 (see the lesson); try others with nvcc -DTRY_ROWS=...
#define TRY_ROWS 2
#endif
constexpr int TILE_Y = 32;          // rows along j
constexpr int ROWS = TRY_ROWS;      // rows per thread
constexpr int WARPS = TILE_Y / ROWS;  // one warp per ROWS rows
constexpr int MAX_FUSED = 8;        // the kernels for S = 1..8 are compiled

// Cells per thread along k: at most 16 bytes (one access), and 4 where the queues fit. A thread
// keeps two values of each cell for each level below S in registers, 2·S·ROWS·W values; one
// block of 512 threads per SM leaves it 128 registers. W·S values of A in at most 64 bytes keep
// the queues at 64 registers: W = 4 for float up to S = 4, 2 up to S = 8.
template <int S, class A>
constexpr int kCells = 4 * sizeof(A) <= 16 && 4 * S * sizeof(A) <= 64 ? 4 : 2 * sizeof(A) <= 16 && 2 * S * sizeof(A) <= 64 ? 2 : 1;

// Cells per thread of the narrow last column of tiles (pass_of), where W is 4.
constexpr int kNarrowCells = 2;

// The columns of a tile. Tile bx writes the state cells among columns bx·written ..
// (bx+1)·written - 1, and starts halo_left columns before them. Both are whole threads (multiples
// of W): a thread's W cells are one aligned access (when N is a multiple of W too), and a thread
// writes all of them or none. The halo is at least S on each side. Narrow: the tiles of the
// narrow last column, kNarrowCells a thread.
template <int S, class A, bool Narrow = false> struct TileColumns {
    static constexpr int W = Narrow ? kNarrowCells : kCells<S, A>;
    static constexpr int width = 32 * W;
    static constexpr int halo_left = (S + W - 1) / W * W;
    static constexpr int written = (width - halo_left - S) / W * W;
};

// Tiles along k: the last one's written columns reach N-2, or N-1 where the ghosts along k are
// written by the tiles that hold them (Neumann, periodic: see `store`).
unsigned tiles_along_k(unsigned N, unsigned written, Boundary bc) {
    return (bc == Boundary::Dirichlet ? N - 2 : N - 1) / written + 1;
}

// A thread's W cells of one row, in the arithmetic type, aligned for one shared-memory access.
template <class A, int W> struct alignas(W * sizeof(A)) Strip {
    A v[W];
};

// The value a cell stores, back in the arithmetic type: every level is rounded as a single step
// of stage 07 rounds it.
template <class T> __device__ Arith<T> stored(Arith<T> u) { return to_arith(from_arith<T>(u)); }

// This thread's W cells of one row from `row` (cell k0 of a row of `in`): one access when
// `vector`, else cell by cell; cells outside 0..N-1 along k read 0.
template <int W, class T> __device__ Strip<Arith<T>, W> load_strip(const T* row, int k0, int N, bool vector) {
    Strip<Arith<T>, W> c;
    if (vector && k0 >= 0 && k0 + W <= N) {
        Cells<T, W> v = load_cells<W>(row);
        for (int e = 0; e < W; ++e) c.v[e] = v.v[e];
    } else {
        for (int e = 0; e < W; ++e) c.v[e] = k0 + e >= 0 && k0 + e < N ? to_arith(row[e]) : Arith<T>(0);
    }
    return c;
}

// Neumann and periodic boundaries: the tiles' positions beyond a face hold state cells (region 2),
// and the ghost rows and planes follow the state (region 6). Both regions stand here, before
// region 1, because both kernels use them.
// ---- EXERCISE 2 of 8: Neumann and periodic - the state cell a position beyond a face holds ----
// Neumann: the ghost beyond a face mirrors the cell next to it (ghost 0 holds cell 1), and so
// does every position further out (-1 holds cell 2): the mirror image has period 2(N-2).
// Periodic: the state cells form a ring of N-2 (ghost 0 holds cell N-2, ghost N-1 cell 1).
template <Boundary BC> __device__ int state_of(int at, int N) {
    const int period = BC == Boundary::Neumann ? 2 * (N - 2) : N - 2;
    int m = (at - 1) % period;  // C++'s % keeps the sign of at - 1
    if (m < 0) m += period;
    return 1 + (m < N - 2 ? m : period - 1 - m);  // 0..N-3 as they are; Neumann's 2nd half mirrored
}
// ---- END EXERCISE ----

// ---- EXERCISE 6 of 8: Neumann and periodic - the ghost rows and planes follow the new state ----
// A row or plane next to a face sets the ghost row or plane beside it: put(at) writes the thread's
// cells of `cell` (p, j, k0) at `at` too. From row (plane) 1 to the ghost it sets: the one next to
// it (Neumann's mirror, index 0) or the far one (periodic, index N-1); from N-2 the other way.
template <Boundary BC, class T, class Put>
__device__ void put_ghosts(const Put& put, T* cell, int j, int p, int N, size_t plane) {
    const ptrdiff_t low = BC == Boundary::Neumann ? -1 : N - 2;
    if (j == 1) put(cell + low * N);
    if (j == N - 2) put(cell - low * N);
    if (p == 1) put(cell + low * ptrdiff_t(plane));
    if (p == N - 2) put(cell - low * ptrdiff_t(plane));
}
// ---- END EXERCISE ----

// S steps in one pass over planes first..last-1: reads `in` once (and S planes more on each
// side), writes `out` once. WithSource: source is added at each step (Jacobi), a compile-time
// choice so that the time loop's kernel carries no trace of it. Narrow: the instance for the
// last column of tiles along k, whose tiles are half as wide and start at column k_first (the
// wide tiles start at 0).
template <int S, class T, Boundary BC, bool WithSource, bool Narrow = false>
__global__ void __launch_bounds__(32 * WARPS, 1)
fused_steps_kernel(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ source, int N, Arith<T> r,
                   int chunk, int k_first) {
    using A = Arith<T>;
    using Tile = TileColumns<S, A, Narrow>;
    if (!Narrow) k_first = 0;  // a constant: the wide kernel keeps its registers (lesson 08)
    constexpr int W = Tile::W;
    using Run = Strip<A, W>;  // a thread's W cells of one row
    constexpr bool neumann = BC == Boundary::Neumann, periodic = BC == Boundary::Periodic;
    // Neumann and periodic boundaries: every position along an axis, ghosts and beyond, holds a
    // state cell (exercise 2), so the tile's halo is loaded from those cells and every cell of the
    // tile is computed as a state cell, with no face code in the loop. Dirichlet ghosts keep their value.
    constexpr bool mapped = neumann || periodic;
    // Periodic boundaries also take the shorter path of `load` below where rows start off W-cell
    // boundaries. Dirichlet's and Neumann's kernels keep their bounds tests: the same path spilled
    // in theirs once, and since it does not, it changes them by no more than the noise (lesson 08).
    constexpr bool spare = periodic;
    // edges[s][b][1 + y][0 or 1][x]: level s of the first and last row of thread (x, y), the rows
    // its neighbours above and below need, in two buffers b so that level s can write the plane it
    // computes now while level s+1 reads the one before. Slots 0 and WARPS + 1 hold zeros for the
    // rows beyond the tile: only its edge rows read them, and no cell it writes depends on those.
    extern __shared__ unsigned char shared_bytes[];
    auto edges = reinterpret_cast<Run(*)[2][WARPS + 2][2][32]>(shared_bytes);
    const int x = threadIdx.x, y = threadIdx.y;
    if (y == 0 || y == WARPS - 1)
        for (int s = 0; s < S; ++s)
            for (int b = 0; b < 2; ++b)
                for (int h = 0; h < 2; ++h) edges[s][b][y == 0 ? 0 : WARPS + 1][h][x] = Run{};

    // ---- EXERCISE 1 of 8: the halo - this thread's cells, and which of them the block writes ----
    const int tile_j = 1 + blockIdx.y * (TILE_Y - 2 * S) - S;        // the tile's first row
    const int tile_k = k_first + blockIdx.x * Tile::written - Tile::halo_left;  // and its first column
    const int j0 = tile_j + ROWS * y;  // this thread's first row
    const int col = W * x;             // its first column in the tile
    const int k0 = tile_k + col;       // its first cell along k
    const int first = 1 + blockIdx.z * chunk, last = min(first + chunk, N - 1);  // the planes the block writes
    auto row_inside = [&](int row) { return j0 + row >= 0 && j0 + row < N; };
    auto row_state = [&](int row) { return j0 + row >= 1 && j0 + row <= N - 2; };
    auto row_writes = [&](int row) { return row_state(row) && ROWS * y + row >= S && ROWS * y + row < TILE_Y - S; };
    auto cell_state = [&](int e) { return k0 + e >= 1 && k0 + e <= N - 2; };
    auto cell_writes = [&](int e) { return cell_state(e) && col >= Tile::halo_left && col < Tile::halo_left + Tile::written; };
    // ---- END EXERCISE ----
    // Only tiles whose rows (columns) reach a face hold ghosts, cells on a face or cells outside
    // the grid along j (k): the tests for those run in them alone, on these masks of the thread's
    // rows and cells, computed once.
    const bool tile_j_face = tile_j <= 1 || tile_j + TILE_Y - 1 >= N - 2;
    const bool tile_k_face = tile_k <= 1 || tile_k + Tile::width - 1 >= N - 2;
    unsigned ghost_rows = 0, face_rows = 0, written_rows = 0, ghost_cells = 0, written_cells = 0;
    for (int row = 0; row < ROWS; ++row) {
        ghost_rows |= unsigned(!row_state(row)) << row;
        face_rows |= unsigned(j0 + row == 1 || j0 + row == N - 2) << row;
        written_rows |= unsigned(row_writes(row)) << row;
    }
    for (int e = 0; e < W; ++e) ghost_cells |= unsigned(!cell_state(e)) << e;
    // Away from the k faces, a thread writes all its W cells or none.
    const bool lane_writes = col >= Tile::halo_left && col < Tile::halo_left + Tile::written;
    // At a k face it writes those of its written columns that lie in the grid, the ghosts at k = 0
    // and N-1 too: a Dirichlet ghost with the value it keeps, a Neumann or periodic one with its
    // new value, computed like the state cell it holds. So no cell writes a ghost along k for
    // another, and a thread whose cells all lie in the grid writes them in one access.
    for (int e = 0; e < W; ++e)
        written_cells |= unsigned(cell_writes(e) || (lane_writes && (k0 + e == 0 || k0 + e == N - 1))) << e;
    constexpr unsigned all_cells = (1u << W) - 1;
    // Neumann, periodic: no cell the block writes needs the positions more than S beyond a k face.
    const bool lane_needed = k0 + W > -S && k0 < N + S;

    const size_t plane = size_t(N) * N;  // distance from (i, j, k) to (i+1, j, k)
    const size_t corner = size_t(j0) * N + k0;  // (0, j0, k0); j0 and k0 may lie outside the grid
    const bool vector = N % W == 0;           // then every row starts aligned, as does each thread's k0
    // Neumann, periodic: the state cell that each row and column of the tile holds (row_of: its
    // offset j·N), computed once, so that a load is an index in the loop.
    __shared__ int row_of[TILE_Y], column_of[Tile::width];
    if (mapped) {
        for (int at = ROWS * y; at < ROWS * (y + 1); ++at) row_of[at] = state_of<BC>(tile_j + at, N) * N;
        if (y == 0)
            for (int e = 0; e < W; ++e) column_of[col + e] = state_of<BC>(k0 + e, N);
    }
    // This thread's cells of plane i, level 0. `checked`: plane i may lie outside the state (a
    // ghost, or outside the grid); else it is a state plane.
    auto load = [&](int i, Run(&c)[ROWS], auto checked, bool j_face, bool k_face) {
        const int p = mapped && checked.value && (i < 1 || i > N - 2) ? state_of<BC>(i, N) : i;
        for (int row = 0; row < ROWS; ++row) {
            const T* cells = in + p * plane + corner + row * N;
            if (!checked.value && !j_face && !k_face && vector) {
                c[row] = load_strip<W>(cells, 0, W, true);
            } else if (spare && !checked.value && !j_face && !k_face) {  // every cell inside: no tests
                c[row] = load_strip<W>(cells, 0, W, false);
            } else if (mapped) {
                const T* state_row = in + p * plane + row_of[ROWS * y + row];
                if (k_face && ghost_cells) {
                    for (int e = 0; e < W; ++e)
                        c[row].v[e] = lane_needed ? to_arith(state_row[column_of[col + e]]) : A(0);
                } else {
                    c[row] = load_strip<W>(state_row + k0, k0, N, vector);
                }
            } else {
                c[row] = i < N && row_inside(row) ? load_strip<W>(cells, k0, N, vector) : Run{};
            }
        }
    };
    // Whether a cell of plane p is a state cell (not a ghost, not outside the grid).
    auto state = [&](int p, int row, int e) {
        return p >= 1 && p <= N - 2 && !(ghost_rows >> row & 1) && !(ghost_cells >> e & 1);
    };
    // Level S of plane p, the cells this thread writes: in one access where it writes all W.
    auto store = [&](int p, const Run(&u)[ROWS], auto checked, bool j_face, bool k_face) {
        const unsigned cells = k_face ? written_cells : lane_writes ? all_cells : 0u;
        if (!cells) return;
#pragma unroll  // (left to itself, nvcc keeps the loop, and re-derives the masks in it)
        for (int row = 0; row < ROWS; ++row) {
            if (!(written_rows >> row & 1)) continue;
            Cells<T, W> v;
            for (int e = 0; e < W; ++e) v.v[e] = u[row].v[e];
            auto put = [&](T* at) {
                if (cells != all_cells) {
                    for (int e = 0; e < W; ++e)
                        if (cells >> e & 1) at[e] = from_arith<T>(v.v[e]);
                } else if (vector) {
                    store_cells<W>(at, v);
                } else {
                    for (int e = 0; e < W; ++e) at[e] = from_arith<T>(v.v[e]);
                }
            };
            T* cell = out + p * plane + corner + row * N;  // (p, j0 + row, k0)
            put(cell);
            // Neumann and periodic: a row or plane next to a face sets the ghost row or plane
            // beside it (face rows come only in tiles along the j faces, face planes only in the
            // checked iterations).
            if (!mapped || !((j_face && (face_rows >> row & 1)) || (checked.value && (p == 1 || p == N - 2))))
                continue;
            put_ghosts<BC>(put, cell, j0 + row, p, N, plane);
        }
    };

    // For each level s = 0..S-1, the cells of the plane p that level s+1 computes next: curr[s],
    // level s of plane p, and part[s], the first terms of level s+1's sum for it: its neighbours
    // along k and plane p-1, at level s. The rest of the sum comes with plane p+1.
    Run curr[S][ROWS] = {}, part[S][ROWS] = {};
    Run ahead[ROWS];  // plane t+1, loaded during iteration t
    // Level S of plane `first` needs level 0 from plane first-S on (Neumann, periodic: planes
    // before 1 hold state planes too).
    const int start = mapped ? first - S : max(first - S, 0);
    __syncthreads();  // the zeros and the maps are in place
    load(start, ahead, std::true_type{}, tile_j_face, tile_k_face);

    // Iteration t takes plane t from DRAM, and level s computes plane t - s: a wavefront along i.
    // `checked`: a level's plane is a ghost or on a face (0, 1, N-2 or N-1), or plane t+1 is not
    // a state plane; only the first and last few iterations test for those. In the first S
    // iterations the levels also compute planes before `start`, from zeros and from rows not yet
    // written: no cell the block writes depends on those.
    // `faces`: the faces the tile reaches (bit 0: along j, bit 1: along k), a compile-time constant
    // in the middle iterations, so that a tile away from the faces runs none of their code; -1: the
    // tile's own flags, at run time (the first and last few iterations).
    auto iteration = [&](int t, auto checked, auto faces) {
        const bool j_face = faces.value < 0 ? tile_j_face : (faces.value & 1) != 0;
        const bool k_face = faces.value < 0 ? tile_k_face : (faces.value & 2) != 0;
        const int now = t & 1, before = 1 - now;  // t < 0 with Neumann and periodic boundaries
        Run next[ROWS];  // the plane the last level computed: level 0 of plane t, first
        for (int row = 0; row < ROWS; ++row) next[row] = ahead[row];
        load(t + 1, ahead, checked, j_face, k_face);
        edges[0][now][y + 1][0][x] = next[0];
        edges[0][now][y + 1][1][x] = next[ROWS - 1];
#pragma unroll
        for (int s = 1; s <= S; ++s) {
            const int p = t - s;                // the plane level s computes
            const Run(&c)[ROWS] = curr[s - 1];  // level s-1 of plane p: this thread's cells
            // The rows next to this thread's, from the warps below and above.
            const Run below = edges[s - 1][before][y][1][x];
            const Run above = edges[s - 1][before][y + 2][0][x];
            Run u[ROWS];
            for (int row = 0; row < ROWS; ++row) {
                // Level s-1 neighbours of plane p that its sum still lacks: down, up, and front (plane p+1).
                const Run down = row == 0 ? below : c[row - 1], up = row == ROWS - 1 ? above : c[row + 1];
                const Run front = next[row];
                for (int e = 0; e < W; ++e) {
                    // ---- EXERCISE 3 of 8: the step - cell e at level s, rounded as a single step rounds it ----
                    const A sum = part[s - 1][row].v[e] + front.v[e] + down.v[e] + up.v[e];
                    A v = c[row].v[e] + r * (sum - A(6) * c[row].v[e]);
                    if (WithSource && state(p, row, e)) v += to_arith(source[p * plane + corner + row * N + e]);
                    u[row].v[e] = stored<T>(v);
                    // ---- END EXERCISE ----
                }
            }
            // Dirichlet ghosts keep their value. (Neumann and periodic ones are computed as the
            // state cells they hold.)
            if (!mapped && checked.value && (p < 1 || p > N - 2))
                for (int row = 0; row < ROWS; ++row) u[row] = c[row];
            if (!mapped && j_face)
                for (int row = 0; row < ROWS; ++row)
                    if (ghost_rows >> row & 1) u[row] = c[row];
            if (!mapped && k_face)
                for (int e = 0; e < W; ++e)
                    if (ghost_cells >> e & 1)
                        for (int row = 0; row < ROWS; ++row) u[row].v[e] = c[row].v[e];
            for (int row = 0; row < ROWS; ++row) {
                const A left = __shfl_up_sync(0xffffffffu, next[row].v[W - 1], 1);  // cell k0-1 of plane p+1, held by lane x-1
                const A right = __shfl_down_sync(0xffffffffu, next[row].v[0], 1);   // cell k0+W, held by lane x+1
                // ---- EXERCISE 4 of 8: the first terms of plane p+1's sum - its neighbours along k, then plane p ----
                for (int e = 0; e < W; ++e) {
                    const A west = e == 0 ? left : next[row].v[e - 1];
                    const A east = e == W - 1 ? right : next[row].v[e + 1];
                    part[s - 1][row].v[e] = west + east + c[row].v[e];  // + back: plane p
                }
                // ---- END EXERCISE ----
            }
            for (int row = 0; row < ROWS; ++row) {
                // ---- EXERCISE 5 of 8: the wavefront - level s-1 moves on by one plane, and level s has a new one ----
                curr[s - 1][row] = next[row];
                next[row] = u[row];
                // ---- END EXERCISE ----
            }
            if (s < S) {
                edges[s][now][y + 1][0][x] = u[0];
                edges[s][now][y + 1][1][x] = u[ROWS - 1];
            } else if (p >= first && p < last) {
                store(p, u, checked, j_face, k_face);
            }
        }
        __syncthreads();  // this iteration's planes are complete before the next one reads them
    };
    // The iterations over t in three runs: the first few and the last few test for ghosts and faces
    // (t <= S+1, t >= N-2); those between need no tests (plane t+1 and the levels' planes are all
    // state planes off the faces) and run in a loop compiled once for each set of faces a tile can
    // reach (Jacobi's kernel: once for all).
    const int end = last + S, stop = min(end, N - 2);
    int t = start;
    for (; t < end && t <= S + 1; ++t) iteration(t, std::true_type{}, std::integral_constant<int, -1>{});
    auto middle = [&](auto faces) {
        for (; t < stop; ++t) iteration(t, std::false_type{}, faces);
    };
    if constexpr (WithSource) middle(std::integral_constant<int, -1>{});
    else if (tile_j_face && tile_k_face) middle(std::integral_constant<int, 3>{});
    else if (tile_j_face) middle(std::integral_constant<int, 1>{});
    else if (tile_k_face) middle(std::integral_constant<int, 2>{});
    else middle(std::integral_constant<int, 0>{});
    for (; t < end; ++t) iteration(t, std::true_type{}, std::integral_constant<int, -1>{});
}

// The pairs kernel's edges (region 8): one Strip of pairs per thread instead of two rows.
template <int S, class T>
constexpr size_t kPairsSharedBytes = size_t(S) * 2 * (WARPS + 2) * 32 * 2 * sizeof(Strip<T, kCells<S, Arith<T>>>);

// ---- EXERCISE 8 of 8 (optional): half and bf16 storage, two cells per instruction ----
// A kernel of its own for 2-byte storage (no source): the kernel above computes in float and
// rounds each level, as stage 07 does, and so executes more instructions per update than its float
// instance for half the bytes, and loses to stage 07. Here a thread's two rows are packed, cell e
// of both in one Pair (row 0 low, row 1 high), and every add and multiply-add does two cells in
// the storage type itself. Along k and i the pairs line up; along j a cell's down and up
// neighbours are half of its own pair and half of the next thread's. Each level computes
// (1 - 6r)·u + r·(sum of the six neighbours), with no cancellation in half. The tiles, halo,
// chunks, iterations and boundaries (region 2's map, region 6's ghosts) are those above.
template <class T> struct PairOf;  // two cells of T in one register, and their parts
template <> struct PairOf<__half> {
    using type = __half2;
    static __device__ type make(__half lo, __half hi) { return __halves2half2(lo, hi); }
    static __device__ __half lo(type p) { return __low2half(p); }
    static __device__ __half hi(type p) { return __high2half(p); }
    static __device__ type splat(float v) { return __float2half2_rn(v); }
    static __device__ type add(type a, type b) { return __hadd2(a, b); }
    static __device__ type mul(type a, type b) { return __hmul2(a, b); }
    static __device__ type fma(type a, type b, type c) { return __hfma2(a, b, c); }
};
template <> struct PairOf<__nv_bfloat16> {
    using type = __nv_bfloat162;
    static __device__ type make(__nv_bfloat16 lo, __nv_bfloat16 hi) { return __halves2bfloat162(lo, hi); }
    static __device__ __nv_bfloat16 lo(type p) { return __low2bfloat16(p); }
    static __device__ __nv_bfloat16 hi(type p) { return __high2bfloat16(p); }
    static __device__ type splat(float v) { return __float2bfloat162_rn(v); }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    static __device__ type add(type a, type b) { return __hadd2(a, b); }
    static __device__ type mul(type a, type b) { return __hmul2(a, b); }
    static __device__ type fma(type a, type b, type c) { return __hfma2(a, b, c); }
#else  // no bf16 arithmetic before Ampere: in float, then rounded to bf16 (not measured there)
    static __device__ type add(type a, type b) {
        const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b);
        return __floats2bfloat162_rn(x.x + y.x, x.y + y.y);
    }
    static __device__ type mul(type a, type b) {
        const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b);
        return __floats2bfloat162_rn(x.x * y.x, x.y * y.y);
    }
    static __device__ type fma(type a, type b, type c) {
        const float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b), z = __bfloat1622float2(c);
        return __floats2bfloat162_rn(fmaf(x.x, y.x, z.x), fmaf(x.y, y.y, z.y));
    }
#endif
};

// Periodic rows on W-cell boundaries (N and k0 multiples of W): position k beyond a k face holds
// cell k + N - 2 (or k - N + 2), and a thread's W such cells lie in order in two aligned runs of W
// at the other end of the row, at place (e - 2) mod W for cell e: two accesses where a gather
// takes W. The lanes with none read their own cells again (`own`, the same sectors), so that the
// warp does not diverge; a run no cell is taken from stays within the row.
template <int W, class T>
__device__ void read_far_end(const T* row, int k0, int own, int N, unsigned ghosts, Strip<T, W>& h) {
    constexpr int offset = (W - 2 % W) % W;
    const int first = !ghosts ? own : (k0 <= 0 ? k0 + N - 2 : k0 - N + 2) - offset;
    T cells[2 * W];
    const Stored<T, W> run0 = load_stored<W>(row + max(first, 0)), run1 = load_stored<W>(row + min(first + W, N - W));
    memcpy(cells, &run0, sizeof run0);
    memcpy(cells + W, &run1, sizeof run1);
    for (int e = 0; e < W; ++e)
        if (ghosts >> e & 1) h.v[e] = cells[offset + e];
}

// The block's tile (column along k, row along j, chunk along i), with the blocks of the first and
// last columns, the tiles at a k face, first in launch order. Those tiles run longer than the
// others; started first, they leave the short tiles for the end of the pass, where the SMs wait
// for the slowest blocks (lesson 08, "The tiles at a k face first").
__device__ uint3 face_tiles_first() {
    const unsigned columns = gridDim.x, rows = gridDim.y;
    if (columns <= 2) return blockIdx;  // every tile is at a k face
    unsigned b = blockIdx.x + columns * (blockIdx.y + rows * blockIdx.z);  // the launch order
    const unsigned face_blocks = 2 * rows * gridDim.z;
    unsigned column;
    if (b < face_blocks) {
        column = b % 2 ? columns - 1 : 0;
        b /= 2;
    } else {
        b -= face_blocks;
        column = 1 + b % (columns - 2);
        b /= columns - 2;
    }
    return make_uint3(column, b % rows, b / rows);
}

template <int S, class T, Boundary BC, bool LatePack>
__global__ void __launch_bounds__(32 * WARPS, 1)
fused_steps_kernel_pairs(const T* __restrict__ in, T* __restrict__ out, const T* __restrict__, int N, Arith<T> r,
                         int chunk) {
    static_assert(ROWS == 2, "a thread's two rows make the pairs");
    using Pair = PairOf<T>;
    using P = typename Pair::type;
    using Tile = TileColumns<S, Arith<T>>;
    constexpr int W = Tile::W;
    using PRun = Strip<P, W>;  // cell e of both rows
    using HRun = Strip<T, W>;  // one row as stored
    constexpr bool mapped = BC != Boundary::Dirichlet;
    // edges[s][b][1 + y][x]: level s of thread (x, y)'s pairs, for the warps above and below.
    extern __shared__ unsigned char shared_bytes[];
    auto edges = reinterpret_cast<PRun(*)[2][WARPS + 2][32]>(shared_bytes);
    const int x = threadIdx.x, y = threadIdx.y;
    if (y == 0 || y == WARPS - 1)
        for (int s = 0; s < S; ++s)
            for (int b = 0; b < 2; ++b) edges[s][b][y == 0 ? 0 : WARPS + 1][x] = PRun{};
    // The k-face tiles first where that measured faster: periodic boundaries on whole accesses, the
    // others on cell-by-cell ones (lesson 08).
    constexpr bool faces_first = BC == Boundary::Periodic ? !LatePack : LatePack;
    const uint3 tile = faces_first ? face_tiles_first() : blockIdx;
    const int tile_j = int(tile.y) * (TILE_Y - 2 * S) + 1 - S;  // as region 1
    const int tile_k = tile.x * Tile::written - Tile::halo_left;
    const int j0 = tile_j + ROWS * y;
    const int col = W * x;
    const int k0 = tile_k + col;
    const int first = 1 + tile.z * chunk, last = min(first + chunk, N - 1);
    auto row_inside = [&](int row) { return j0 + row >= 0 && j0 + row < N; };
    auto row_state = [&](int row) { return j0 + row >= 1 && j0 + row <= N - 2; };
    auto row_writes = [&](int row) { return row_state(row) && S <= ROWS * y + row && ROWS * y + row < TILE_Y - S; };
    auto cell_state = [&](int e) { return k0 + e >= 1 && k0 + e <= N - 2; };
    auto cell_writes = [&](int e) { return cell_state(e) && col >= Tile::halo_left && col < Tile::halo_left + Tile::written; };
    // The lambdas, masks and maps of regions 1 and 2.
    const bool tile_j_face = tile_j <= 1 || tile_j + TILE_Y - 1 >= N - 2;
    const bool tile_k_face = tile_k <= 1 || tile_k + Tile::width - 1 >= N - 2;
    unsigned ghost_rows = 0, face_rows = 0, written_rows = 0, ghost_cells = 0, written_cells = 0;
    for (int row = 0; row < ROWS; ++row) {
        ghost_rows |= unsigned(!row_state(row)) << row;
        face_rows |= unsigned(j0 + row == 1 || j0 + row == N - 2) << row;
        written_rows |= unsigned(row_writes(row)) << row;
    }
    for (int e = 0; e < W; ++e) ghost_cells |= unsigned(!cell_state(e)) << e;
    const bool lane_writes = col >= Tile::halo_left && col < Tile::halo_left + Tile::written;
    for (int e = 0; e < W; ++e)
        written_cells |= unsigned(cell_writes(e) || (lane_writes && (k0 + e == 0 || k0 + e == N - 1))) << e;
    constexpr unsigned all_cells = (1u << W) - 1;
    const bool lane_needed = k0 + W > -S && k0 < N + S;
    const size_t plane = size_t(N) * N;
    const size_t corner = size_t(j0) * N + k0;
    const bool vector = N % W == 0;
    // Neumann, periodic: the state cells this thread's rows and cells hold, in registers (the
    // kernel of regions 1-7, at its 128 registers, keeps them in shared memory).
    int row_at[ROWS], column_at[W];
    for (int row = 0; row < ROWS; ++row) row_at[row] = mapped ? state_of<BC>(j0 + row, N) * N : 0;
    for (int e = 0; e < W; ++e) column_at[e] = mapped ? state_of<BC>(k0 + e, N) : 0;
    // Neumann, rows on W-cell boundaries: position k beyond a k face holds cell 1 - k (or 2N - 3 - k),
    // which a lane of the same warp loads anyway, at place (1 - e) mod W of its cells for this
    // thread's cell e. So the lanes beyond a face load no cells of their own and take those by
    // shuffles (`load`): no gathers beside the aligned loads. mirror_lane[e]: the lane that holds
    // the cell position k0 + e holds (column_at[e]). Where N leaves any needed one outside the warp,
    // or elsewhere among its lane's cells (mirrored twice, in small grids), the warp gathers.
    constexpr bool may_mirror = BC == Boundary::Neumann && !LatePack;
    auto mirror_place = [](int e) { return (1 - e + W) % W; };  // where the shuffle reads it
    int mirror_lane[W];
    bool in_warp = vector;
    for (int e = 0; e < W; ++e) {
        const int m = column_at[e] - tile_k;  // its place in the tile's columns
        mirror_lane[e] = m / W;
        if (lane_needed && (ghost_cells >> e & 1) && !(m >= 0 && m < Tile::width && m % W == mirror_place(e)))
            in_warp = false;
    }
    const bool mirrored = may_mirror && __all_sync(0xffffffffu, in_warp);
    // Periodic, rows on W-cell boundaries: those cells lie at the other end of the row, in order, in
    // two aligned runs of W (read_far_end), where N leaves room for them.
    const bool far_runs = BC == Boundary::Periodic && !LatePack && vector && N >= 2 * (2 * W + S);
    const P r2 = Pair::splat(r), keep2 = Pair::splat(1.0f - 6.0f * r);

    // One row of plane p as stored, in one access where `inner` (every cell lies in the grid, and p
    // is a state plane) and the row is aligned. Neumann, periodic: p is the state plane that plane
    // i holds, and a row or cell beyond a face reads the state cell it holds.
    auto load_row = [&](int i, int p, int row, bool inner, bool j_face, bool k_face) {
        HRun h;
        const T* cells = in + p * plane + corner + row * N;
        if (inner && vector) {
            const Stored<T, W> v = load_stored<W>(cells);
            memcpy(h.v, &v, sizeof h.v);
        } else if (mapped && inner) {
            for (int e = 0; e < W; ++e) h.v[e] = cells[e];
        } else if (mapped) {
            const T* state_row = j_face ? in + p * plane + row_at[row] : cells - k0;  // off the j faces, rows hold themselves
            if ((mirrored || far_runs) && k_face) {  // every lane loads W cells: its own, or the row's nearest
                const int own = min(max(k0, 0), N - W);
                const Stored<T, W> v = load_stored<W>(state_row + own);
                memcpy(h.v, &v, sizeof h.v);
                if (far_runs) read_far_end(state_row, k0, own, N, lane_needed ? ghost_cells : 0u, h);
            } else if (k_face && ghost_cells) {
                for (int e = 0; e < W; ++e) h.v[e] = lane_needed ? state_row[column_at[e]] : T(0.0f);
            } else if (vector) {  // all W are state cells
                const Stored<T, W> v = load_stored<W>(state_row + k0);
                memcpy(h.v, &v, sizeof h.v);
            } else {
                for (int e = 0; e < W; ++e) h.v[e] = state_row[k0 + e];
            }
        } else {
            const bool inside = i < N && row_inside(row);
            for (int e = 0; e < W; ++e) h.v[e] = inside && k0 + e >= 0 && k0 + e < N ? cells[e] : T(0.0f);
        }
        return h;
    };
    // Plane i's two rows, packed into pairs. (Written out, not as pack() of load_rows() below: that
    // form compiled to 12% more instructions under Dirichlet boundaries and ran 15-20% slower at
    // the multiples of 4; variant v2 in lesson 08's runs file.)
    auto load = [&](int i, PRun& c, auto checked, bool j_face, bool k_face) {
        const int p = mapped && checked.value && (i < 1 || i > N - 2) ? state_of<BC>(i, N) : i;
        const bool inner = !checked.value && !j_face && !k_face;
        const HRun a = load_row(i, p, 0, inner, j_face, k_face), b = load_row(i, p, 1, inner, j_face, k_face);
        for (int e = 0; e < W; ++e) c.v[e] = Pair::make(a.v[e], b.v[e]);
        if (mirrored && k_face)
            for (int e = 0; e < W; ++e) {
                const P cell = __shfl_sync(0xffffffffu, c.v[mirror_place(e)], mirror_lane[e]);
                if (ghost_cells >> e & 1) c.v[e] = cell;
            }
    };
    // LatePack (rows off W-cell boundaries): plane i's rows as stored, packed an iteration later,
    // where they are used. Cell by cell, the packing right after the loads waits for them all.
    auto load_rows = [&](int i, HRun(&rows)[ROWS], auto checked, bool j_face, bool k_face) {
        const int p = mapped && checked.value && (i < 1 || i > N - 2) ? state_of<BC>(i, N) : i;
        const bool inner = !checked.value && !j_face && !k_face;
        for (int row = 0; row < ROWS; ++row) rows[row] = load_row(i, p, row, inner, j_face, k_face);
    };
    auto pack = [&](const HRun(&rows)[ROWS]) {
        PRun c;
        for (int e = 0; e < W; ++e) c.v[e] = Pair::make(rows[0].v[e], rows[1].v[e]);
        return c;
    };
    // Level S of plane p, unpacked into its two rows: the cells this thread writes (Neumann,
    // periodic: and the ghost rows and planes they set, as region 6 writes them).
    auto store = [&](int p, const PRun& u, auto checked, bool j_face, bool k_face) {
        const unsigned cells = k_face ? written_cells : lane_writes ? all_cells : 0u;
        if (!cells) return;
#pragma unroll
        for (int row = 0; row < ROWS; ++row) {
            if (!(written_rows >> row & 1)) continue;
            HRun h;
            for (int e = 0; e < W; ++e) h.v[e] = row == 0 ? Pair::lo(u.v[e]) : Pair::hi(u.v[e]);
            auto put = [&](T* at) {
                if (cells != all_cells || !vector) {
                    for (int e = 0; e < W; ++e)
                        if (cells >> e & 1) at[e] = h.v[e];
                } else {
                    Stored<T, W> v;
                    memcpy(&v, h.v, sizeof h.v);
                    *reinterpret_cast<decltype(v)*>(at) = v;
                }
            };
            T* cell = out + p * plane + corner + row * N;
            put(cell);
            if (!mapped || !((j_face && (face_rows >> row & 1)) || (checked.value && (p == 1 || p == N - 2))))
                continue;
            put_ghosts<BC>(put, cell, j0 + row, p, N, plane);  // region 6
        }
    };

    PRun curr[S] = {}, part[S] = {};
    PRun ahead;                // plane t+1, loaded during iteration t
    HRun ahead_rows[ROWS];     // the same, not yet packed (LatePack)
    const int start = mapped ? first - S : max(first - S, 0);
    __syncthreads();  // the zeros are in place
    if constexpr (LatePack) load_rows(start, ahead_rows, std::true_type{}, tile_j_face, tile_k_face);
    else load(start, ahead, std::true_type{}, tile_j_face, tile_k_face);
    // The iterations of the kernel above: level s computes plane t - s.
    auto iteration = [&](int t, auto checked, auto faces) {
        const bool j_face = faces.value < 0 ? tile_j_face : (faces.value & 1) != 0;
        const bool k_face = faces.value < 0 ? tile_k_face : (faces.value & 2) != 0;
        const int now = t & 1, before = 1 - now;
        PRun next;
        if constexpr (LatePack) {
            next = pack(ahead_rows);
            load_rows(t + 1, ahead_rows, checked, j_face, k_face);
        } else {
            next = ahead;
            load(t + 1, ahead, checked, j_face, k_face);
        }
        edges[0][now][y + 1][x] = next;
#pragma unroll
        for (int s = 1; s <= S; ++s) {
            const int p = t - s;
            const PRun c = curr[s - 1];
            const PRun below = edges[s - 1][before][y][x];
            const PRun above = edges[s - 1][before][y + 2][x];
            PRun u;
            for (int e = 0; e < W; ++e) {  // (1 - 6r)·c + r·(part + front + down + up), two cells at once
                const P down = Pair::make(Pair::hi(below.v[e]), Pair::lo(c.v[e]));
                const P up = Pair::make(Pair::hi(c.v[e]), Pair::lo(above.v[e]));
                const P sum = Pair::add(Pair::add(part[s - 1].v[e], next.v[e]), Pair::add(down, up));
                u.v[e] = Pair::fma(r2, sum, Pair::mul(keep2, c.v[e]));
            }
            // Dirichlet ghosts keep their value (Neumann and periodic ones are computed).
            if (!mapped && checked.value && (p < 1 || p > N - 2)) u = c;
            if (!mapped && j_face && ghost_rows) {
                for (int e = 0; e < W; ++e) {
                    const T lo = ghost_rows & 1 ? Pair::lo(c.v[e]) : Pair::lo(u.v[e]);
                    const T hi = ghost_rows & 2 ? Pair::hi(c.v[e]) : Pair::hi(u.v[e]);
                    u.v[e] = Pair::make(lo, hi);
                }
            }
            if (!mapped && k_face)
                for (int e = 0; e < W; ++e)
                    if (ghost_cells >> e & 1) u.v[e] = c.v[e];
            const P left = __shfl_up_sync(0xffffffffu, next.v[W - 1], 1);
            const P right = __shfl_down_sync(0xffffffffu, next.v[0], 1);
            for (int e = 0; e < W; ++e) {
                const P west = e == 0 ? left : next.v[e - 1];
                const P east = e == W - 1 ? right : next.v[e + 1];
                part[s - 1].v[e] = Pair::add(Pair::add(west, east), c.v[e]);
            }
            curr[s - 1] = next;
            next = u;
            if (s < S) edges[s][now][y + 1][x] = u;
            else if (p >= first && p < last) store(p, u, checked, j_face, k_face);
        }
        __syncthreads();  // this iteration's planes are complete before the next one reads them
    };
    const int end = last + S, stop = min(end, N - 2);
    int t = start;
    for (; t < end && t <= S + 1; ++t) iteration(t, std::true_type{}, std::integral_constant<int, -1>{});
    auto middle = [&](auto faces) {
        for (; t < stop; ++t) iteration(t, std::false_type{}, faces);
    };
    if (tile_j_face && tile_k_face) middle(std::integral_constant<int, 3>{});
    else if (tile_j_face) middle(std::integral_constant<int, 1>{});
    else if (tile_k_face) middle(std::integral_constant<int, 2>{});
    else middle(std::integral_constant<int, 0>{});
    for (; t < end; ++t) iteration(t, std::true_type{}, std::integral_constant<int, -1>{});
}

// The pairs kernel where it serves (2-byte storage, no source), with the dynamic shared memory it
// asks for set once; else nullptr, and the kernel above runs. Rows on W-cell boundaries (N % W ==
// 0) load in one access each and pack at once; other rows pack late (LatePack): each is faster
// where it runs (measured, lesson 08).
template <int S, class T, Boundary BC, bool WithSource> const void* pairs_kernel(unsigned N) {
    if constexpr (sizeof(T) == 2 && !WithSource) {
        auto instance = [](auto late) {
            constexpr auto kernel = fused_steps_kernel_pairs<S, T, BC, decltype(late)::value>;
            CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPairsSharedBytes<S, T>)));
            return reinterpret_cast<const void*>(kernel);
        };
        static const void* aligned = instance(std::false_type{});
        static const void* unaligned = instance(std::true_type{});
        return N % kCells<S, Arith<T>> == 0 ? aligned : unaligned;
    } else {
        return nullptr;
    }
}
// ---- END EXERCISE ----

template <int S, class T, bool Narrow = false>
constexpr size_t kSharedBytes =
    size_t(S) * 2 * (WARPS + 2) * 2 * 32 * sizeof(Strip<Arith<T>, TileColumns<S, Arith<T>, Narrow>::W>);

// The kernel of regions 1-7, with the dynamic shared memory it asks for set once (more than 48 KiB
// per block must be asked for).
template <int S, class T, Boundary BC, bool WithSource, bool Narrow = false> const void* kernel_of() {
    static const void* kernel = [] {
        constexpr auto instance = fused_steps_kernel<S, T, BC, WithSource, Narrow>;
        CUDA_CHECK(cudaFuncSetAttribute(instance, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSharedBytes<S, T, Narrow>)));
        return reinterpret_cast<const void*>(instance);
    }();
    return kernel;
}

// Calls f with S as a compile-time constant (S > MAX_FUSED, which the harness refuses, runs MAX_FUSED).
template <int S = 1, class F> auto with_fused_steps(unsigned fused, F f) {
    if constexpr (S < MAX_FUSED)
        if (fused != unsigned(S)) return with_fused_steps<S + 1>(fused, f);
    return f(std::integral_constant<int, S>{});
}

// Calls f with the storage type, S, the boundary condition and whether there is a source, as
// compile-time constants. A source comes only with Jacobi, whose boundaries are Dirichlet.
template <class F> auto with_kernel(const HeatStep& step, F f) {
    return with_storage_type(step.precision, [&](auto t) {
        return with_fused_steps(step.fused_steps, [&](auto fused) {
            using Dirichlet = std::integral_constant<Boundary, Boundary::Dirichlet>;
            if (step.source != nullptr) return f(t, fused, Dirichlet{}, std::true_type{});
            if (step.bc == Boundary::Neumann)
                return f(t, fused, std::integral_constant<Boundary, Boundary::Neumann>{}, std::false_type{});
            if (step.bc == Boundary::Periodic)
                return f(t, fused, std::integral_constant<Boundary, Boundary::Periodic>{}, std::false_type{});
            return f(t, fused, Dirichlet{}, std::false_type{});
        });
    });
}

// Planes per block along i. One block fills an SM, and there are few tiles per plane, so the
// blocks split the planes into chunks; each chunk costs 2S planes more (S to start the levels
// and S to finish them). The chunk that fills the SMs in whole waves in the least time (waves ×
// planes a block runs), of at most kMaxChunk planes: blocks do not all take the same time (the
// tiles at the faces run longer), so the last wave ends with its slowest block, and the longer
// the blocks the more that costs (lesson 08: one chunk of 1022 planes against four at N = 1024).
constexpr unsigned kMaxChunk = 256;
constexpr unsigned kMaxPairsChunk = 128;  // the kernel of pairs, N a multiple of its cells, Neumann or periodic
constexpr unsigned kLongNarrowChunk = 64, kNarrowChunks = 12;  // the narrow last column (pass_of)
unsigned chunk_planes(unsigned N, unsigned tiles, unsigned S, int blocks_per_sm, unsigned max_chunk = kMaxChunk) {
    const unsigned slots = sm_count() * unsigned(std::max(blocks_per_sm, 1));
    unsigned best = N - 2;
    double best_time = 1e300;
    for (unsigned chunks = 1; chunks <= N - 2; ++chunks) {
        const unsigned planes = ceil_div(N - 2, chunks);
        if (planes > max_chunk) continue;
        const double time = double(ceil_div(tiles * ceil_div(N - 2, planes), slots)) * (planes + 2 * S);
        if (time < best_time) best = planes, best_time = time;
    }
    return best;
}

// One pass's launches: the kernel over the tiles of `shape` in `grid` (columns of tiles along k,
// rows of tiles along j, chunks of shape.tile_i planes along i); then, where `last_kernel` is set,
// the last column of tiles as narrow tiles (kNarrowCells a thread) in `last_grid`, from column
// last_k_first, with chunks of last_chunk planes.
struct Pass {
    KernelShape shape;
    dim3 grid = dim3();
    const void* last_kernel = nullptr;
    size_t last_shared_bytes = 0;
    dim3 last_grid = dim3();
    int last_k_first = 0;
    unsigned last_chunk = 0;
};

// The block, grid and tiles of the pass. A last column of wide tiles that holds no more columns
// than a narrow tile writes runs as narrow tiles, on a second stream beside the wide launch
// (launch_pass): narrower tiles compute fewer columns for nothing, and their blocks take the SMs
// that the wide launch leaves idle, where it leaves any (at N = 512 its two waves are whole, and
// they run after it: lesson 08). Measured over the sweep, this pays on average at S = 4 for every
// boundary condition, though it loses up to 7% at a few sizes, and lost at S = 3; half's pairs
// kernel (region 8) has no narrow form.
template <int S, class T, Boundary BC, bool WithSource> Pass pass_of(unsigned N) {
    using Tile = TileColumns<S, Arith<T>>;
    const void* pairs = pairs_kernel<S, T, BC, WithSource>(N);  // region 8, where it serves
    KernelShape shape{pairs ? pairs : kernel_of<S, T, BC, WithSource>(), dim3(32, WARPS, 1), unsigned(Tile::W),
                      pairs ? kPairsSharedBytes<S, T> : kSharedBytes<S, T>, unsigned(TILE_Y - 2 * S), unsigned(Tile::written)};
    shape.read_j = TILE_Y;
    shape.read_k = Tile::width;
    shape.tiles_start_k = 0;
    const unsigned tiles_k = tiles_along_k(N, shape.tile_k, BC), rows = ceil_div(N - 2, shape.tile_j);
    const int resident = resident_blocks(shape.kernel, 32 * WARPS, shape.shared_bytes);  // of the kernel that runs
    Pass pass{shape};
    unsigned wide_k = tiles_k;  // columns of wide tiles
    if constexpr (S == 4 && std::is_same_v<T, float> && !WithSource) {
        using Narrow = TileColumns<S, Arith<T>, true>;
        const unsigned k_first = (tiles_k - 1) * Tile::written;
        if (tiles_k >= 2 && N - k_first <= unsigned(Narrow::written)) {
            const void* narrow = kernel_of<S, T, BC, false, true>();
            constexpr size_t narrow_bytes = kSharedBytes<S, T, true>;
            wide_k = tiles_k - 1;
            pass.last_kernel = narrow;
            pass.last_shared_bytes = narrow_bytes;
            pass.last_k_first = int(k_first);
            pass.last_chunk = chunk_planes(N, rows, S, resident_blocks(narrow, 32 * WARPS, narrow_bytes));
            // Long narrow chunks end the pass late: the narrow blocks fill the SMs that the wide launch's
            // slowest blocks leave idle, and shorter ones fill them better (lesson 08, "Twelve narrow chunks").
            if (pass.last_chunk > kLongNarrowChunk) pass.last_chunk = std::min(pass.last_chunk, ceil_div(N - 2, kNarrowChunks));
            pass.last_grid = dim3(1, rows, ceil_div(N - 2, pass.last_chunk));
        }
    }
    // The kernel of pairs on whole accesses (N a multiple of its cells) runs faster in shorter
    // chunks where its tiles at a k face run longer than the others (Neumann, periodic).
    const bool aligned_pairs = pairs && BC != Boundary::Dirichlet && N % kCells<S, Arith<T>> == 0;
    pass.shape.tile_i = chunk_planes(N, wide_k * rows, S, resident, aligned_pairs ? kMaxPairsChunk : kMaxChunk);
    pass.grid = dim3(wide_k, rows, ceil_div(N - 2, pass.shape.tile_i));
    return pass;
}

// The second stream of launch_pass, and the events that fork it from the caller's stream and join
// it back; created once.
struct SideStream {
    cudaStream_t stream;
    cudaEvent_t fork, join;
};
const SideStream& side_stream() {
    static const SideStream side = [] {
        SideStream t;
        CUDA_CHECK(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&t.fork, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&t.join, cudaEventDisableTiming));
        return t;
    }();
    return side;
}

// One pass of step.fused_steps steps from `in` into `out`.
Status launch_pass(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    return with_kernel(step, [&](auto t, auto fused, auto bc, auto source) {
        using T = decltype(t);
        const Pass pass = pass_of<fused.value, T, bc.value, source.value>(N);
        const KernelShape& shape = pass.shape;
        const T* from = static_cast<const T*>(in);
        T* to = static_cast<T*>(out);
        const T* source_cells = static_cast<const T*>(step.source);
        int n = int(N), chunk = int(shape.tile_i), k_first = 0;
        Arith<T> r = Arith<T>(step.r);
        void* args[] = {&from, &to, &source_cells, &n, &r, &chunk, &k_first};  // (the pairs kernel takes the first 6)
        if (!pass.last_kernel) return cudaLaunchKernel(shape.kernel, pass.grid, shape.block, args, shape.shared_bytes, s);
        // The narrow column goes on the side stream, forked before the wide launch and joined
        // after: in s, the two run side by side, and what follows waits for both.
        const SideStream& side = side_stream();
        int last_chunk = int(pass.last_chunk), last_k_first = pass.last_k_first;
        void* last_args[] = {&from, &to, &source_cells, &n, &r, &last_chunk, &last_k_first};
        Status e = cudaEventRecord(side.fork, s);
        if (e == cudaSuccess) e = cudaStreamWaitEvent(side.stream, side.fork, 0);
        if (e == cudaSuccess) e = cudaLaunchKernel(shape.kernel, pass.grid, shape.block, args, shape.shared_bytes, s);
        if (e == cudaSuccess)
            e = cudaLaunchKernel(pass.last_kernel, pass.last_grid, shape.block, last_args, pass.last_shared_bytes,
                                 side.stream);
        if (e == cudaSuccess) e = cudaEventRecord(side.join, side.stream);
        if (e == cudaSuccess) e = cudaStreamWaitEvent(s, side.join, 0);
        return e;
    });
}

Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s) {
    HeatStep one = step;
    one.fused_steps = 1;
    return launch_pass(in, out, N, one, s);
}

Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result) {
    // ---- EXERCISE 7 of 8: the host loop - passes of S steps, then the rest one step at a time ----
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
    return with_kernel(step, [&](auto t, auto fused, auto bc, auto source) {
        return pass_of<fused.value, decltype(t), bc.value, source.value>(N).shape;
    });
}

const HeatStageInfo kHeatStage = {"08_temporal_blocking", "Temporal blocking: S steps per trip through memory",
                                  MAX_FUSED};
