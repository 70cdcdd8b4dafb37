// Stage 08 - beyond the book: temporal blocking. S steps of stage 07 for each trip through DRAM.
// Lesson: chapters/08_temporal_blocking/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
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
// TODO: the state cell (1..N-2) that position `at` along an axis holds, under boundary BC;
// positions may lie beyond the grid, by up to a tile (more than N at small N). Neumann: the
// ghost beyond a face mirrors the cell next to it, and the mirror goes on: 0 holds 1, -1 holds
// 2, N-1 holds N-2, N holds N-3; the pattern repeats every 2(N-2) positions. Periodic: the
// state cells form a ring, repeating every N-2 positions: 0 holds N-2, N-1 holds 1. Mind C++'s
// %, which keeps the sign of a negative left operand. (Clamping, below, is right for position 0
// under Neumann only.)
template <Boundary BC> __device__ int state_of(int at, int N) { return min(max(at, 1), N - 2); }
// ---- END EXERCISE ----

// ---- EXERCISE 6 of 8: Neumann and periodic - the ghost rows and planes follow the new state ----
// TODO: under Neumann and periodic boundaries a row (j) or plane (p) next to a face also sets the
// ghost row or plane beside it: put(cell + offset) writes the thread's cells of `cell`, cell (p,
// j, k0) of the output, there too. Neumann: the mirror, cell - N for j = 1 and cell + N for j =
// N-2; cell - plane and cell + plane for p = 1 and N-2. Periodic: the ghost at the far end, N-2
// rows away: row 1 sets ghost row N-1 (cell + (N - 2)·N), row N-2 sets ghost row 0; likewise
// along i. (Along k there is nothing to write: the ghosts at k = 0 and N-1 are cells of the
// tiles, written with the rest.) Mind the types: plane is a size_t, and an offset may be negative.
template <Boundary BC, class T, class Put>
__device__ void put_ghosts(const Put& put, T* cell, int j, int p, int N, size_t plane) {}
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
    // TODO: this thread's cells and what they are. The block writes rows from
    // 1 + blockIdx.y·(TILE_Y - 2S) on, and its tile starts S rows before them; warp y holds ROWS
    // rows of it. Along k the block writes Tile::written columns from k_first +
    // blockIdx.x·Tile::written on (k_first: where this launch's tiles start, 0 but for the narrow
    // last column), and its tile starts Tile::halo_left before them; lane x holds W cells from
    // column W·x of the tile. Along i the block writes the planes first..last-1: a chunk of
    // `chunk` planes from 1 + blockIdx.z·chunk, ending at N-2 at the latest.
    // inside: 0..N-1. state: 1..N-2. A row or cell is written when it is a state one outside the
    // halo: S <= its row in the tile < TILE_Y - S, halo_left <= its column < halo_left + written.
    const int tile_j = 0;
    const int tile_k = 0;
    const int j0 = tile_j;
    const int col = W * x;
    const int k0 = tile_k + col;
    const int first = 1, last = 1;
    auto row_inside = [&](int row) { return row < 0; };
    auto row_state = [&](int row) { return row < 0; };
    auto row_writes = [&](int row) { return row < 0; };
    auto cell_state = [&](int e) { return e < 0; };
    auto cell_writes = [&](int e) { return e < 0; };
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
                    // TODO: level s of cell e, stage 07's update of c[row].v[e] with the sum of its
                    // six neighbours: part[s - 1][row].v[e] (west + east + back, added an iteration
                    // ago) + front + down + up, in that order; plus source[...] when WithSource
                    // (Jacobi) and state(p, row, e); rounded with stored<T>() as a single step rounds it.
                    u[row].v[e] = c[row].v[e];
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
                // TODO: start plane p+1's sum at level s: part[s - 1][row].v[e] = west + east + back,
                // where west and east are cells k-1 and k+1 of next[row] (at the ends, left and right
                // from the next lanes) and back is plane p, c[row].v[e].
                (void)left;
                (void)right;
                // ---- END EXERCISE ----
            }
            for (int row = 0; row < ROWS; ++row) {
                // ---- EXERCISE 5 of 8: the wavefront - level s-1 moves on by one plane, and level s has a new one ----
                // TODO: the queues move on. The plane level s-1 has just computed (next) becomes
                // its current one (curr[s - 1]), and u, level s of plane p, is what level s+1
                // computes from next.
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
// TODO (after regions 1-7; lesson 08, "Half storage"): a kernel of its own for 2-byte storage,
// with the signature of fused_steps_kernel, that packs a thread's two rows into one __half2 (or
// __nv_bfloat162) per cell and computes each level in that type, two cells per instruction. Start
// with Dirichlet boundaries; Neumann and periodic then take region 2's map and region 6's ghosts.
// Return it here for sizeof(T) == 2 and no source, for the boundaries it handles (set its dynamic
// shared memory, kPairsSharedBytes, with cudaFuncSetAttribute once); N is there for a choice of
// instance by grid size. nullptr runs the kernel above, correct but slower than stage 07 in half.
template <int S, class T, Boundary BC, bool WithSource> const void* pairs_kernel(unsigned /* N */) { return nullptr; }
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
    return with_kernel(step, [&](auto t, auto fused, auto bc, auto source) {
        return pass_of<fused.value, decltype(t), bc.value, source.value>(N).shape;
    });
}

const HeatStageInfo kHeatStage = {"08_temporal_blocking", "Temporal blocking: S steps per trip through memory",
                                  MAX_FUSED};
