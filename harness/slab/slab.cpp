#include "slab/slab.h"

#include <algorithm>

#include "common/grid.h"

Slab slab_of(unsigned N, unsigned rank, unsigned ranks) {
    const unsigned planes = N - 2, base = planes / ranks, extra = planes % ranks;
    Slab s;
    s.planes = base + (rank < extra ? 1 : 0);
    s.first = 1 + rank * base + std::min(rank, extra);
    return s;
}

std::string decomposition_problem(unsigned N, unsigned ranks) {
    if (ranks == 0) return "no ranks: at least one GPU must take part";
    if (N < 3) return "N = " + std::to_string(N) + " has no state plane";
    if (ranks > N - 2)
        return "more ranks than planes: N = " + std::to_string(N) + " has " + std::to_string(N - 2) +
               " state planes along i (1..N-2), so at most " + std::to_string(N - 2) + " ranks can each own one, not " +
               std::to_string(ranks) + ": use fewer ranks or a larger N";
    return "";
}

std::string slab_mismatch(unsigned N, unsigned rank, unsigned ranks, const Slab& got) {
    const Slab want = slab_of(N, rank, ranks);
    if (got == want) return "";
    auto text = [](const Slab& s) {
        return s.planes == 0 ? std::string("no planes")
                             : "planes " + std::to_string(s.first) + ".." + std::to_string(s.last()) + " (" +
                                   std::to_string(s.planes) + ")";
    };
    return "slab_bounds(N = " + std::to_string(N) + ", rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
           ") gave " + text(got) + ", expected " + text(want) + ": the slabs must cover the state planes 1..N-2 " +
           "once, in rank order, the first (N-2) % ranks of them one plane larger";
}

unsigned owner_of(unsigned N, unsigned ranks, unsigned i) {
    const unsigned planes = N - 2, base = planes / ranks, extra = planes % ranks;
    const unsigned x = i - 1, big = extra * (base + 1);  // planes held by the larger slabs
    return x < big ? x / (base + 1) : extra + (x - big) / base;
}

namespace {
// The face ghosts inside one plane (rows j = 0, N-1 and columns k = 0, N-1), as fill_ghosts sets
// them for a state plane.
void fill_plane_ghosts(double* u, unsigned N, Boundary bc) {
    if (bc == Boundary::Dirichlet) return;
    const unsigned low = face_ghost_source(true, N, bc), high = face_ghost_source(false, N, bc);
    for (unsigned b = 1; b + 1 < N; ++b) {
        u[size_t(0) * N + b] = u[size_t(low) * N + b];
        u[size_t(N - 1) * N + b] = u[size_t(high) * N + b];
        u[size_t(b) * N + 0] = u[size_t(b) * N + low];
        u[size_t(b) * N + N - 1] = u[size_t(b) * N + high];
    }
}

// The face cells (1..N-2 along j and k) of `from` copied into `to`: a ghost plane i = 0 or N-1.
void copy_face_cells(const std::vector<double>& from, std::vector<double>& to, unsigned N) {
    for (unsigned a = 1; a + 1 < N; ++a)
        for (unsigned b = 1; b + 1 < N; ++b) to[size_t(a) * N + b] = from[size_t(a) * N + b];
}

std::vector<double> raw_plane(unsigned N, Precision p, uint64_t seed, unsigned i) {
    std::vector<double> u(plane_cells(N));
    const size_t base = size_t(i) * plane_cells(N);
    for (size_t c = 0; c < u.size(); ++c) u[c] = round_to(p, random_value(seed, base + c));
    return u;
}
}  // namespace

std::vector<double> initial_plane(unsigned N, Boundary bc, Precision p, uint64_t seed, unsigned i) {
    std::vector<double> u = raw_plane(N, p, seed, i);
    if (i == 0 || i == N - 1) {
        if (bc != Boundary::Dirichlet) {
            std::vector<double> from = initial_plane(N, bc, p, seed, face_ghost_source(i == 0, N, bc));
            copy_face_cells(from, u, N);
        }
        return u;
    }
    fill_plane_ghosts(u.data(), N, bc);
    return u;
}

namespace {
// The window of planes the reference steps: position x holds global plane wrap(x). With periodic
// boundaries x runs over the state planes unwrapped (the window may hold a plane more than once);
// otherwise x is the global plane and the window stops at the ghost planes 0 and N-1.
struct Window {
    unsigned N;
    Boundary bc;
    long lo, hi;  // inclusive
    unsigned global(long x) const {
        if (bc != Boundary::Periodic) return unsigned(x);
        const long period = long(N) - 2;
        return unsigned(1 + (((x - 1) % period) + period) % period);
    }
};

Window window_of(unsigned N, Boundary bc, unsigned steps, unsigned first, unsigned last) {
    // A Neumann ghost plane takes the new values of the plane next to it, so it depends on that one's cone.
    long lo = long(first), hi = long(last);
    if (bc == Boundary::Neumann && first == 0) hi = std::max(hi, 1L);
    if (bc == Boundary::Neumann && last == N - 1) lo = std::min(lo, long(N) - 2);
    Window w{N, bc, lo - long(steps), hi + long(steps)};
    if (bc != Boundary::Periodic) {
        w.lo = std::max(w.lo, 0L);
        w.hi = std::min(w.hi, long(N) - 1);
    }
    return w;
}
}  // namespace

double reference_planes_work(unsigned N, Boundary bc, unsigned steps, unsigned first, unsigned last) {
    Window w = window_of(N, bc, steps, first, last);
    return double(w.hi - w.lo + 1) * double(N - 2) * double(N - 2) * steps;
}

std::vector<double> reference_planes(unsigned N, Boundary bc, double r, Precision p, unsigned steps, unsigned first,
                                     unsigned last, const std::function<std::vector<double>(unsigned)>& plane) {
    Window w = window_of(N, bc, steps, first, last);
    const size_t pc = plane_cells(N);
    std::vector<std::vector<double>> cur(size_t(w.hi - w.lo + 1));
    for (long x = w.lo; x <= w.hi; ++x) cur[size_t(x - w.lo)] = plane(w.global(x));
    // Planes [valid_lo, valid_hi] of the window are exact after each step; those outside are stale.
    long valid_lo = w.lo, valid_hi = w.hi;
    std::vector<std::vector<double>> next = cur;
    for (unsigned s = 0; s < steps; ++s) {
        const bool ghost_lo = bc != Boundary::Periodic && valid_lo == 0;
        const bool ghost_hi = bc != Boundary::Periodic && valid_hi == long(N) - 1;
        const long from = ghost_lo ? 1 : valid_lo + 1, to = ghost_hi ? long(N) - 2 : valid_hi - 1;
        for (long x = from; x <= to; ++x) {
            const std::vector<double>&prev = cur[size_t(x - 1 - w.lo)], &in = cur[size_t(x - w.lo)],
                                  &after = cur[size_t(x + 1 - w.lo)];
            std::vector<double>& out = next[size_t(x - w.lo)];
            out = in;
            for (unsigned j = 1; j + 1 < N; ++j)
                for (unsigned k = 1; k + 1 < N; ++k) {
                    size_t at = size_t(j) * N + k;
                    double u = in[at];
                    // reference_step's sum, term for term: k-1, k+1, j-1, j+1, i-1, i+1
                    double sum = in[at - 1] + in[at + 1] + in[at - N] + in[at + N] + prev[at] + after[at];
                    out[at] = round_to(p, u + r * (sum - 6 * u));
                }
            fill_plane_ghosts(out.data(), N, bc);
        }
        // The ghost planes of the domain (Neumann: the new plane next to them; Dirichlet: fixed).
        if (ghost_lo && bc == Boundary::Neumann) copy_face_cells(next[size_t(1 - w.lo)], next[size_t(0 - w.lo)], N);
        if (ghost_hi && bc == Boundary::Neumann)
            copy_face_cells(next[size_t(long(N) - 2 - w.lo)], next[size_t(long(N) - 1 - w.lo)], N);
        valid_lo = ghost_lo ? 0 : valid_lo + 1;
        valid_hi = ghost_hi ? long(N) - 1 : valid_hi - 1;
        for (long x = valid_lo; x <= valid_hi; ++x) cur[size_t(x - w.lo)].swap(next[size_t(x - w.lo)]);
    }
    std::vector<double> out;
    out.reserve(size_t(last - first + 1) * pc);
    for (unsigned i = first; i <= last; ++i) {
        long x = long(i);
        const std::vector<double>& src = cur[size_t(x - w.lo)];
        out.insert(out.end(), src.begin(), src.end());
    }
    return out;
}
