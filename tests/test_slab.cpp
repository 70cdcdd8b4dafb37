// Stage 09 on the CPU: the slab decomposition for many (N, ranks) pairs, the 64-bit offsets of a
// slab past 2^32 cells, the initial state made plane by plane, and the reference of a few planes
// against the full-grid reference. These run everywhere, with or without NCCL, MPI or a GPU.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "common/grid.h"
#include "heat/heat.h"
#include "slab/slab.h"

namespace {
const Boundary kAll[] = {Boundary::Dirichlet, Boundary::Neumann, Boundary::Periodic};

// Every rank's slab: contiguous, in order, covering 1..N-2 once, sizes within one of each other,
// the larger ones first; owner_of agrees; slab_mismatch accepts each slab and rejects a neighbour's.
void check_partition(unsigned N, unsigned ranks) {
    CHECK(decomposition_problem(N, ranks).empty());
    unsigned next = 1, smallest = ~0u, largest = 0;
    for (unsigned r = 0; r < ranks; ++r) {
        Slab s = slab_of(N, r, ranks);
        CHECK(s.first == next);
        CHECK(s.planes >= 1);
        CHECK(r == 0 || s.planes <= slab_of(N, r - 1, ranks).planes);  // larger slabs first
        smallest = std::min(smallest, s.planes);
        largest = std::max(largest, s.planes);
        for (unsigned i = s.first; i <= s.last(); ++i) CHECK(owner_of(N, ranks, i) == r);
        CHECK(slab_mismatch(N, r, ranks, s).empty());
        if (ranks > 1) CHECK(!slab_mismatch(N, r, ranks, slab_of(N, (r + 1) % ranks, ranks)).empty());
        next = s.last() + 1;
    }
    CHECK(next == N - 1);
    CHECK(largest - smallest <= 1);
}
}  // namespace

int main() {
    // ---- the decomposition
    for (unsigned N = 3; N <= 40; ++N)
        for (unsigned ranks = 1; ranks <= N - 2; ++ranks) check_partition(N, ranks);
    for (unsigned N : {130u, 1026u, 2600u, 4097u})
        for (unsigned ranks : {1u, 2u, 3u, 4u, 7u, 8u, 16u, 127u, N - 3, N - 2}) check_partition(N, ranks);
    // R = N-2: one plane each; R not dividing N-2: the first (N-2) % R slabs one larger.
    for (unsigned r = 0; r < 8; ++r) CHECK(slab_of(10, r, 8).first == 1 + r && slab_of(10, r, 8).planes == 1);
    CHECK(slab_of(12, 0, 3).planes == 4 && slab_of(12, 1, 3).planes == 3 && slab_of(12, 2, 3).planes == 3);
    CHECK(slab_of(12, 1, 3).first == 5 && slab_of(12, 2, 3).first == 8 && slab_of(12, 2, 3).last() == 10);
    CHECK(slab_of(1024, 1, 2).first == 512 && slab_of(1024, 1, 2).last() == 1022);
    // More ranks than planes, and no ranks, are refused with the reason.
    CHECK(decomposition_problem(5, 4).find("more ranks than planes") != std::string::npos);
    CHECK(decomposition_problem(5, 4).find("3 state planes") != std::string::npos);
    CHECK(decomposition_problem(3, 2).find("more ranks than planes") != std::string::npos);
    CHECK(!decomposition_problem(5, 0).empty());
    CHECK(decomposition_problem(5, 3).empty());
    CHECK(slab_mismatch(12, 1, 3, Slab{4, 4}).find("expected planes 5..7 (3)") != std::string::npos);

    // ---- 64-bit offsets: N = 2600 on two GPUs is a slab of 1299 planes (+2 ghosts) of 2600² cells.
    {
        const unsigned N = 2600;
        Slab s = slab_of(N, 0, 2);
        CHECK(s.planes == 1299);
        const size_t cells = slab_buffer_cells(N, s);
        CHECK(cells == size_t(1301) * 2600 * 2600);
        CHECK(cells > (size_t(1) << 32));
        // The last cell of the upper ghost plane, and the cell one plane below it.
        size_t last = local_index(N, s.planes + 1, N - 1, N - 1);
        CHECK(last == cells - 1);
        CHECK(last == 8794759999ull);
        CHECK(local_index(N, s.planes + 1, 0, 0) - local_index(N, s.planes, 0, 0) == plane_cells(N));
        // What 32-bit arithmetic would give instead: wrapped round, far from the right offset.
        uint32_t wrapped = uint32_t(s.planes + 1) * N * N + (N - 1) * N + (N - 1);
        CHECK(size_t(wrapped) != last);
        // The whole grid of N = 2600 and of the largest N a 64-bit index allows in practice.
        CHECK(grid_index(N, N - 1, N - 1, N - 1) == size_t(N) * N * N - 1);
        CHECK(grid_index(65535, 65534, 65534, 65534) == size_t(65535) * 65535 * 65535 - 1);
    }

    // ---- the initial state plane by plane equals random_state, for every boundary and precision.
    for (Boundary bc : kAll)
        for (Precision p : {Precision::Float, Precision::Double, Precision::Half, Precision::BFloat16})
            for (unsigned N : {3u, 4u, 7u}) {
                HostGrid whole = random_state(N, bc, p, 1234 + N);
                bool same = true;
                for (unsigned i = 0; i < N; ++i) {
                    std::vector<double> plane = initial_plane(N, bc, p, 1234 + N, i);
                    for (size_t c = 0; c < plane.size(); ++c) same &= plane[c] == whole[i * plane_cells(N) + c];
                }
                CHECK(same);
            }

    // ---- the reference of a few planes equals the full-grid reference, bit for bit (both float64
    // with the same order of terms), for planes at the faces, in the middle, and around a wrap.
    for (Boundary bc : kAll)
        for (unsigned N : {4u, 9u, 12u})
            for (unsigned steps : {0u, 1u, 3u, 7u}) {
                const Precision p = Precision::Float;
                const uint64_t seed = 77;
                HostGrid u = random_state(N, bc, p, seed), next;
                for (unsigned s = 0; s < steps; ++s) {
                    reference_step(u, next, N, bc, 0.125, nullptr, p);
                    u.swap(next);
                }
                auto plane = [&](unsigned i) { return initial_plane(N, bc, p, seed, i); };
                const unsigned lowest = bc == Boundary::Periodic ? 1 : 0, highest = bc == Boundary::Periodic ? N - 2 : N - 1;
                for (unsigned first = lowest; first <= highest; ++first)
                    for (unsigned last = first; last <= std::min(highest, first + 2); ++last) {
                        std::vector<double> got = reference_planes(N, bc, 0.125, p, steps, first, last, plane);
                        bool same = got.size() == size_t(last - first + 1) * plane_cells(N);
                        for (size_t c = 0; same && c < got.size(); ++c)
                            same = got[c] == u[first * plane_cells(N) + c];
                        if (!same)
                            std::fprintf(stderr, "  %s N=%u steps=%u planes %u..%u differ\n", boundary_name(bc), N, steps,
                                         first, last);
                        CHECK(same);
                    }
            }
    // Its cost: the window of 2·steps planes around them, clamped at the faces unless periodic.
    CHECK(reference_planes_work(10, Boundary::Dirichlet, 2, 1, 1) == 4.0 * 64 * 2);
    CHECK(reference_planes_work(10, Boundary::Periodic, 2, 1, 1) == 5.0 * 64 * 2);
    return test_exit_code();
}
