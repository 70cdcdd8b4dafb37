#pragma once
// Stage 09 (many GPUs) on the CPU: the decomposition of the grid into slabs of planes along i,
// the 64-bit offsets inside a slab, the initial state made plane by plane (a grid too large for
// one GPU is too large for the host too), and the float64 reference of a few planes after some
// steps (the "window" that those planes depend on). Plain C++: the unit tests link it without CUDA.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heat/heat.h"

// The state planes 1..N-2 (along i) split into `ranks` contiguous slabs, in rank order. When the
// ranks do not divide the N-2 planes, the first (N-2) % ranks slabs hold one plane more.
struct Slab {
    unsigned first = 0;   // global index of the first plane the rank owns
    unsigned planes = 0;  // how many it owns (at least 1)
    unsigned last() const { return first + planes - 1; }
    bool operator==(const Slab& o) const { return first == o.first && planes == o.planes; }
};
Slab slab_of(unsigned N, unsigned rank, unsigned ranks);
// "" when N and ranks can be decomposed, else the message: more ranks than planes, or no rank.
std::string decomposition_problem(unsigned N, unsigned ranks);
// "" when `got` (a stage's slab bounds) is rank's slab, else a message that says what differs.
std::string slab_mismatch(unsigned N, unsigned rank, unsigned ranks, const Slab& got);
// The rank that owns state plane i (1..N-2).
unsigned owner_of(unsigned N, unsigned ranks, unsigned i);

// A rank's buffer holds its planes and one ghost plane on each side: local plane l is global
// plane first - 1 + l, l = 0..planes+1. Offsets in cells, in 64-bit arithmetic: a slab of a
// large grid holds more than 2^32 cells (N = 2600 on two GPUs: 1300·2600² = 8.8·10⁹).
inline size_t plane_cells(unsigned N) { return size_t(N) * N; }
inline size_t slab_buffer_cells(unsigned N, const Slab& s) { return (size_t(s.planes) + 2) * plane_cells(N); }
inline size_t local_index(unsigned N, unsigned l, unsigned j, unsigned k) {
    return size_t(l) * plane_cells(N) + size_t(j) * N + k;
}

// Global plane i of the initial state that random_state(N, bc, p, seed) makes, computed alone:
// the same values, rounding and ghosts (tested against random_state).
std::vector<double> initial_plane(unsigned N, Boundary bc, Precision p, uint64_t seed, unsigned i);

// The float64 reference of planes [first, last] after `steps` steps of reference_step, computed
// from the planes those depend on (within `steps` planes of them; wrapping round with periodic
// boundaries), which `plane(i)` supplies. Returns (last - first + 1) planes of N² cells, each
// as reference_step's full-grid result holds it (face ghosts set; edge ghosts as they were).
std::vector<double> reference_planes(unsigned N, Boundary bc, double r, Precision p, unsigned steps, unsigned first,
                                     unsigned last, const std::function<std::vector<double>(unsigned)>& plane);
// Cell-updates that reference_planes does for these planes: its cost, for choosing the steps.
double reference_planes_work(unsigned N, Boundary bc, unsigned steps, unsigned first, unsigned last);
