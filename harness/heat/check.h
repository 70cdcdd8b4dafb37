#pragma once
// Verifies `steps` time steps of the heat equation against the float64 CPU reference of the
// same steps, and explains what went wrong (stages 07 onward).
#include <string>
#include <vector>

#include "common/record.h"
#include "heat/heat.h"

// The reference states the hints compare against: the start, after one step, after steps-1,
// and the answer after `steps`. With the hint states come the step's parameters, so that the
// checker can step from `initial` again, two grids at a time, to find the number of steps an
// output equals (only for a failed check, and only up to a few times `steps`).
struct ReferenceRun {
    unsigned steps = 0;
    HostGrid initial, after_one, before_last, final;
    Boundary bc = Boundary::Dirichlet;
    double r = 0;
    Precision p = Precision::Float;
    HostGrid source;  // the source term (empty: none)
};
// `source` may be null. Keeps the extra states only when `keep_hint_states` (they cost memory).
ReferenceRun run_reference(const HostGrid& initial, unsigned N, Boundary bc, double r, const HostGrid* source,
                           Precision p, unsigned steps, bool keep_hint_states);

struct HeatCheck {
    unsigned steps = 0;
    double tolerance = 0;     // absolute, per cell (the values are of order 1)
    double max_err = 0;       // over state cells and face ghosts (infinity if any is NaN)
    size_t wrong = 0;         // state cells off by more than the tolerance (NaN included)
    size_t unwritten = 0;     // state cells holding NaN
    size_t ghosts_wrong = 0;  // face ghosts (Neumann, periodic) or any ghost (Dirichlet) that differ
    std::vector<WrongCell> first_wrong;
    std::string hint;
    bool ok() const { return wrong == 0 && ghosts_wrong == 0; }
};

// How far a correct GPU result may be from the reference after `steps` steps: each step may
// round differently from the reference by a few units of the storage or arithmetic precision,
// and the stable scheme does not amplify those differences.
double heat_tolerance(Precision p, unsigned steps);

// tile_j, tile_k (0: none) are the rows and columns of a plane that one block of a fused kernel
// writes, and tile_i (0: all) its planes, tiles starting at the first state cell (along k at
// column start_k), so that the hint can recognise errors near the edges of those tiles (stage 08).
HeatCheck check_heat(const HostGrid& got, const ReferenceRun& ref, unsigned N, Boundary bc, Precision p,
                     unsigned tile_j = 0, unsigned tile_k = 0, unsigned tile_i = 0, unsigned start_k = 1);

std::string describe_heat_failure(const HeatCheck& c);
