// Stage 09 - beyond the book: many GPUs. Stage 07's step on a slab of planes per GPU, the ghost
// planes exchanged with NCCL while the interior is computed.
// Lesson: chapters/09_many_gpus/README.md
#include <cstdint>
#include <utility>

#include "heat/cells.cuh"
#include "slab/stage.h"

// A thread owns W neighbouring cells along k (one 16-byte access when N allows it) and walks
// Z_CHUNK planes along i, its i-1 and i+1 cells in registers, as in stage 07.
constexpr unsigned SLAB_BLOCK_X = 32;  // threads along k
constexpr unsigned SLAB_BLOCK_Y = 8;   // rows (j) per block
constexpr unsigned SLAB_Z_CHUNK = 4;   // planes (i) per thread

// ---------------------------------------------------------------- the decomposition

Slab slab_bounds(unsigned N, int rank, int ranks) {
    // ---- EXERCISE 1 of 3: the planes this rank owns: 1..N-2 split into `ranks` contiguous slabs ----
    const unsigned planes = N - 2, base = planes / unsigned(ranks), extra = planes % unsigned(ranks);
    const unsigned r = unsigned(rank);
    Slab s;
    s.planes = base + (r < extra ? 1 : 0);   // the first `extra` ranks take one plane more
    s.first = 1 + r * base + (r < extra ? r : extra);
    return s;
    // ---- END EXERCISE ----
}

// ---------------------------------------------------------------- the step on a slab

// Local planes [iBegin, iEnd) of the slab. Offsets are 64-bit (size_t): a slab of a large grid
// holds more than 2^32 cells, where stage 07's 32-bit i·N² + j·N + k would wrap round. The
// arithmetic per cell is stage 07's, term for term, so that the result is the same bit for bit.
template <int W, class T>
__global__ void __launch_bounds__(SLAB_BLOCK_X * SLAB_BLOCK_Y)
slab_step_kernel(const T* __restrict__ in, T* __restrict__ out, unsigned int N, unsigned int iBegin,
                 unsigned int iEnd, Boundary bc, Arith<T> r) {
    using A = Arith<T>;
    const unsigned int k = W * (blockIdx.x * SLAB_BLOCK_X + threadIdx.x);  // this thread's first cell along k
    const unsigned int j = blockIdx.y * SLAB_BLOCK_Y + threadIdx.y;
    if (j < 1 || j > N - 2 || k >= N) return;
    const size_t plane = size_t(N) * N;
    const unsigned int i0 = iBegin + blockIdx.z * SLAB_Z_CHUNK, i1 = min(i0 + SLAB_Z_CHUNK, iEnd);
    size_t at = size_t(i0) * plane + size_t(j) * N + k;
    Cells<T, W> prev = load_cells<W>(in + at - plane), curr = load_cells<W>(in + at);
    const unsigned int low = face_ghost_source(true, N, bc), high = face_ghost_source(false, N, bc);  // heat.h
    for (unsigned int i = i0; i < i1; ++i, at += plane) {
        Cells<T, W> next = load_cells<W>(in + at + plane), down = load_cells<W>(in + at - N),
                    up = load_cells<W>(in + at + N), u;
        A left = k > 0 ? to_arith(in[at - 1]) : A(0);       // cell k-1
        A right = k + W < N ? to_arith(in[at + W]) : A(0);  // cell k+W
        for (int e = 0; e < W; ++e) {
            A west = e == 0 ? left : curr.v[e - 1];
            A east = e == W - 1 ? right : curr.v[e + 1];
            A sum = west + east + down.v[e] + up.v[e] + prev.v[e] + next.v[e];
            u.v[e] = curr.v[e] + r * (sum - A(6) * curr.v[e]);
        }
        T* row = out + (at - k);  // cell (i, j, 0)
        if (k >= 1 && k + W - 1 <= N - 2) {
            store_cells<W>(row + k, u);
        } else {
            for (int e = 0; e < W; ++e)
                if (k + e >= 1 && k + e <= N - 2) row[k + e] = from_arith<T>(u.v[e]);
        }
        if (bc != Boundary::Dirichlet) {
            // The face ghosts of this plane that copy these cells: columns k = 0, N-1 of row j,
            // and rows j = 0, N-1 where row j is their source.
            for (int e = 0; e < W; ++e) {
                const unsigned int kk = k + e;
                if (kk < 1 || kk > N - 2) continue;
                const T v = from_arith<T>(u.v[e]);
                if (kk == low) row[0] = v;
                if (kk == high) row[N - 1] = v;
                if (j == low) (row - size_t(j) * N)[kk] = v;             // (i, 0, kk)
                if (j == high) (row + size_t(N - 1 - j) * N)[kk] = v;    // (i, N-1, kk)
            }
        }
        prev = curr;
        curr = next;
    }
}

// Neumann's ghost plane at a face of the domain: its face cells (1..N-2 along j and k) take the
// new values of the plane next to it.
template <class T>
__global__ void mirror_plane_kernel(T* u, unsigned int N, unsigned int ghost, unsigned int source) {
    const unsigned int k = 1 + blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (j > N - 2 || k > N - 2) return;
    const size_t plane = size_t(N) * N, cell = size_t(j) * N + k;
    u[ghost * plane + cell] = u[source * plane + cell];
}

// Cells per thread: 16 bytes when every row start is aligned to them, else 4 cells, else 1.
template <class T> constexpr int kSlabWide = 16 / sizeof(T);
template <class T, class F> auto with_slab_width(unsigned N, F f) {
    if (N % kSlabWide<T> == 0) return f(std::integral_constant<int, kSlabWide<T>>{});
    if (kSlabWide<T> > 4 && N % 4 == 0) return f(std::integral_constant<int, 4>{});
    return f(std::integral_constant<int, 1>{});
}

SlabStatus launch_slab_planes(const void* in, void* out, unsigned N, unsigned begin, unsigned end,
                              const HeatStep& step, cudaStream_t s) {
    SlabStatus status;
    if (begin >= end) return status;
    status.cuda = with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        return with_slab_width<T>(N, [&](auto w) {
            constexpr int W = decltype(w)::value;
            dim3 block(SLAB_BLOCK_X, SLAB_BLOCK_Y, 1);
            dim3 grid(ceil_div(N, W * SLAB_BLOCK_X), ceil_div(N, SLAB_BLOCK_Y), ceil_div(end - begin, SLAB_Z_CHUNK));
            slab_step_kernel<W, T><<<grid, block, 0, s>>>(static_cast<const T*>(in), static_cast<T*>(out), N, begin,
                                                          end, step.bc, Arith<T>(step.r));
            return cudaGetLastError();
        });
    });
    status.call = "slab_step_kernel";
    return status;
}

// The rank's first and last planes, and under Neumann boundaries the ghost plane of a domain face
// it holds: what the neighbours need from this step, so it goes first.
SlabStatus step_boundary_planes(const void* in, void* out, const SlabRank& r, const HeatStep& step, cudaStream_t s) {
    const unsigned P = r.slab.planes;
    SlabStatus st = launch_slab_planes(in, out, r.N, 1, 2, step, s);
    if (st.ok() && P > 1) st = launch_slab_planes(in, out, r.N, P, P + 1, step, s);
    if (!st.ok() || step.bc != Boundary::Neumann) return st;
    with_storage_type(step.precision, [&](auto t) {
        using T = decltype(t);
        dim3 block(32, 8, 1), grid(ceil_div(r.N - 2, 32), ceil_div(r.N - 2, 8), 1);
        if (r.rank == 0) mirror_plane_kernel<T><<<grid, block, 0, s>>>(static_cast<T*>(out), r.N, 0, 1);
        if (r.rank == r.ranks - 1) mirror_plane_kernel<T><<<grid, block, 0, s>>>(static_cast<T*>(out), r.N, P + 1, P);
        return 0;
    });
    st.cuda = cudaGetLastError();
    st.call = "mirror_plane_kernel";
    return st;
}

SlabStatus step_interior_planes(const void* in, void* out, const SlabRank& r, const HeatStep& step, cudaStream_t s) {
    return launch_slab_planes(in, out, r.N, 2, r.slab.planes, step, s);  // nothing when planes <= 2
}

// ---------------------------------------------------------------- the exchange

SlabStatus exchange_ghost_planes(void* u, const SlabRank& r, const HeatStep& step, cudaStream_t s) {
    const size_t plane_bytes = plane_cells(r.N) * bytes_per_cell(step.precision);
    char* base = static_cast<char*>(u);
    char* ghost_below = base;                                                  // local plane 0
    char* first = base + plane_bytes;                                          // local plane 1
    char* last = base + size_t(r.slab.planes) * plane_bytes;                   // local plane P
    char* ghost_above = base + (size_t(r.slab.planes) + 1) * plane_bytes;      // local plane P+1
    // ---- EXERCISE 2 of 3: the neighbours, and the planes sent to and received from each ----
    // The ranks below and above; with periodic boundaries the slabs form a ring (rank 0's ghost
    // plane 0 holds plane N-2, which the last rank owns), and one rank is its own neighbour.
    const bool ring = step.bc == Boundary::Periodic;
    const int below = r.rank > 0 ? r.rank - 1 : ring ? r.ranks - 1 : -1;
    const int above = r.rank < r.ranks - 1 ? r.rank + 1 : ring ? 0 : -1;
    // Between two ranks, NCCL pairs the sends and receives in the order they are posted. Send up
    // first, then down; receive from below first, then from above: then the plane a rank sends up
    // lands in the ghost plane below of the rank above, even when below and above are one rank.
    SLAB_CHECK(ncclGroupStart());
    if (above >= 0) SLAB_CHECK(ncclSend(last, plane_bytes, ncclUint8, above, r.comm, s));
    if (below >= 0) SLAB_CHECK(ncclSend(first, plane_bytes, ncclUint8, below, r.comm, s));
    if (below >= 0) SLAB_CHECK(ncclRecv(ghost_below, plane_bytes, ncclUint8, below, r.comm, s));
    if (above >= 0) SLAB_CHECK(ncclRecv(ghost_above, plane_bytes, ncclUint8, above, r.comm, s));
    SLAB_CHECK(ncclGroupEnd());
    // ---- END EXERCISE ----
    return SlabStatus{};
}

// ---------------------------------------------------------------- one step, and the loop

SlabStatus slab_step(const void* in, void* out, const SlabRank& r, const HeatStep& step) {
    if (!r.overlap) {  // for comparison: every plane, then the exchange, one after the other
        SLAB_CHECK(step_boundary_planes(in, out, r, step, r.compute));
        SLAB_CHECK(step_interior_planes(in, out, r, step, r.compute));
        return exchange_ghost_planes(out, r, step, r.compute);
    }
    // ---- EXERCISE 3 of 3: the order: boundary planes, then the exchange beside the interior ----
    // 1. The planes the neighbours need, first, on the compute stream.
    SLAB_CHECK(step_boundary_planes(in, out, r, step, r.compute));
    // 2. The exchange stream waits for them (and for nothing else), then sends and receives.
    SLAB_CHECK(cudaEventRecord(r.boundary_done, r.compute));
    SLAB_CHECK(cudaStreamWaitEvent(r.exchange, r.boundary_done, 0));
    SLAB_CHECK(exchange_ghost_planes(out, r, step, r.exchange));
    // 3. Meanwhile the interior planes, which need no ghost, on the compute stream.
    SLAB_CHECK(step_interior_planes(in, out, r, step, r.compute));
    // 4. The next step reads the ghost planes: the compute stream waits for the exchange.
    SLAB_CHECK(cudaEventRecord(r.ghosts_done, r.exchange));
    SLAB_CHECK(cudaStreamWaitEvent(r.compute, r.ghosts_done, 0));
    // ---- END EXERCISE ----
    return SlabStatus{};
}

SlabStatus run_slab_steps(void* a, void* b, const SlabRank& r, const HeatStep& step, unsigned steps, void** result) {
    void* in = a;
    void* out = b;
    for (unsigned t = 0; t < steps; ++t) {
        SLAB_CHECK(slab_step(in, out, r, step));
        std::swap(in, out);
    }
    *result = in;
    return SlabStatus{};
}

KernelShape slab_kernel_shape(Precision p, unsigned N) {
    return with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        return with_slab_width<T>(N, [&](auto w) {
            return KernelShape{reinterpret_cast<const void*>(slab_step_kernel<decltype(w)::value, T>),
                               dim3(SLAB_BLOCK_X, SLAB_BLOCK_Y, 1), unsigned(decltype(w)::value)};
        });
    });
}

const HeatStageInfo kSlabStage = {"09_many_gpus", "Many GPUs: a slab per GPU, ghost planes through NCCL"};
