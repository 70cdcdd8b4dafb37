#include "heat/check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/grid.h"

namespace {

const char kAxis[] = "ijk";

// Along one axis: 0 for a state cell, 1 for the low ghost (index 0), 2 for the high one (N-1).
int ghost_side(unsigned x, unsigned N) { return x == 0 ? 1 : x == N - 1 ? 2 : 0; }

// Whether the face ghost at x (ghost along the one axis where sides[] is set) holds, in `got`
// itself, the value of the state cell its rule names (face_ghost_source).
bool follows_rule(const HostGrid& got, unsigned N, Boundary bc, const unsigned (&x)[3], const int (&sides)[3]) {
    unsigned y[3] = {x[0], x[1], x[2]};
    for (int a = 0; a < 3; ++a)
        if (sides[a]) y[a] = face_ghost_source(sides[a] == 1, N, bc);
    return got[grid_index(N, x[0], x[1], x[2])] == got[grid_index(N, y[0], y[1], y[2])];
}

bool same_state(const HostGrid& a, const HostGrid& b, unsigned N, double tol) {
    for (unsigned i = 1; i + 1 < N; ++i)
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                if (!(std::fabs(a[at] - b[at]) <= tol)) return false;
            }
    return true;
}

// The first step count m != ref.steps (up to twice the steps, at least 8 more) after which the
// reference state equals `got` within `tol`, or -1. Steps from ref.initial again with two grids.
long steps_matching(const HostGrid& got, const ReferenceRun& ref, unsigned N, double tol) {
    if (ref.initial.empty()) return -1;
    const unsigned last = std::max(2 * ref.steps, ref.steps + 8);
    const HostGrid* source = ref.source.empty() ? nullptr : &ref.source;
    HostGrid u = ref.initial, next;
    for (unsigned m = 0; m <= last; ++m) {
        if (m > 0) {
            reference_step(u, next, N, ref.bc, ref.r, source, ref.p);
            u.swap(next);
        }
        if (m != ref.steps && same_state(got, u, N, tol)) return m;
    }
    return -1;
}

// Where the wrong state cells lie: within `reach` cells of a face of the domain, or of a tile edge.
struct Pattern {
    size_t near_face[3][2] = {};  // [axis][low, high]
    size_t near_any_face = 0;
    size_t near_tile_edge = 0;
};

std::string face_name(int axis, int side) {
    return std::string(1, kAxis[axis]) + (side == 0 ? " = 0" : " = N-1");
}

std::string ghost_hint(Boundary bc, int axis, int side) {
    std::string face = face_name(axis, side), x(1, kAxis[axis]);
    switch (bc) {
        case Boundary::Dirichlet:
            return "ghost cells on the face " + face + " changed: under Dirichlet boundaries they hold fixed values, "
                   "and a step writes only the state cells 1..N-2";
        case Boundary::Neumann:
            return "ghost cells on the face " + face + " do not mirror the state cell next to them: under Neumann "
                   "boundaries ghost 0 takes the new value of cell 1, and ghost N-1 that of cell N-2 (along " + x + ")";
        case Boundary::Periodic:
            return "ghost cells on the face " + face + " do not hold the state cell on the far side: with periodic "
                   "boundaries ghost 0 takes the new value of cell N-2, and ghost N-1 that of cell 1 (along " + x +
                   "; cell N-1 is a ghost itself, so copying it is off by one)";
    }
    return "";
}

std::string face_hint(Boundary bc, int axis, int side, unsigned steps) {
    std::string where = "all wrong cells lie within " + std::to_string(std::max(steps, 1u)) + " cell(s) of the face " +
                        face_name(axis, side) + ": ";
    switch (bc) {
        case Boundary::Dirichlet: return where + "the step reads the wrong neighbour there, or writes a ghost cell";
        case Boundary::Neumann: return where + "that face's ghosts are not mirrored from the new values, so heat "
                                               "leaks through it (Neumann needs every face mirrored after each step)";
        case Boundary::Periodic: return where + "the wrap across that face is wrong (the neighbour of cell 1 "
                                                "below it is cell N-2, whose value ghost 0 must hold)";
    }
    return "";
}

}  // namespace

ReferenceRun run_reference(const HostGrid& initial, unsigned N, Boundary bc, double r, const HostGrid* source,
                           Precision p, unsigned steps, bool keep_hint_states) {
    ReferenceRun run;
    run.steps = steps;
    run.final = initial;
    HostGrid next;
    for (unsigned s = 1; s <= steps; ++s) {
        if (keep_hint_states && s == steps) run.before_last = run.final;
        reference_step(run.final, next, N, bc, r, source, p);
        run.final.swap(next);
        if (keep_hint_states && s == 1) run.after_one = run.final;
    }
    if (keep_hint_states) {
        run.initial = initial;
        run.bc = bc;
        run.r = r;
        run.p = p;
        if (source) run.source = *source;
    }
    return run;
}

double heat_tolerance(Precision p, unsigned steps) {
    // Float arithmetic for float and half storage; double for double.
    double unit = std::max(unit_roundoff(p), p == Precision::Double ? unit_roundoff(p) : std::ldexp(1.0, -24));
    return 8 * unit * (steps + 1);
}

HeatCheck check_heat(const HostGrid& got, const ReferenceRun& ref, unsigned N, Boundary bc, Precision p,
                     unsigned tile_j, unsigned tile_k, unsigned tile_i, unsigned start_k) {
    HeatCheck c;
    c.steps = ref.steps;
    c.tolerance = heat_tolerance(p, ref.steps);
    const HostGrid& want = ref.final;
    const unsigned reach = std::max(ref.steps, 1u);
    const unsigned tile[3] = {tile_i, tile_j, tile_k}, tile_start[3] = {1, 1, start_k};
    const bool tiled = tile_j > 0 || tile_k > 0;
    Pattern pattern;
    size_t ghost_faces[3][2] = {}, ghosts_broken = 0;
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                const unsigned x[3] = {i, j, k};
                const int sides[3] = {ghost_side(i, N), ghost_side(j, N), ghost_side(k, N)};
                const int ghost_axes = (sides[0] > 0) + (sides[1] > 0) + (sides[2] > 0);
                size_t at = grid_index(N, i, j, k);
                double d = std::fabs(got[at] - want[at]);
                if (std::isnan(got[at])) d = std::numeric_limits<double>::infinity();
                if (ghost_axes > 0) {
                    // Dirichlet ghosts must keep their bits; other boundaries set only face ghosts.
                    bool checked = bc == Boundary::Dirichlet || ghost_axes == 1;
                    bool bad = bc == Boundary::Dirichlet ? !(got[at] == want[at]) : !(d <= c.tolerance);
                    if (checked && bad) {
                        ++c.ghosts_wrong;
                        // A face ghost that follows its (wrong) state cell only repeats that cell's
                        // error: the ghost hint is for ghosts that break their rule.
                        if (bc == Boundary::Dirichlet || !follows_rule(got, N, bc, x, sides)) {
                            ++ghosts_broken;
                            for (int a = 0; a < 3; ++a)
                                if (sides[a]) ++ghost_faces[a][sides[a] - 1];
                        }
                    }
                    if (checked && bc != Boundary::Dirichlet) c.max_err = std::max(c.max_err, d);
                    continue;
                }
                c.max_err = std::max(c.max_err, d);
                if (d <= c.tolerance) continue;
                ++c.wrong;
                if (std::isnan(got[at])) ++c.unwritten;
                if (c.first_wrong.size() < kMaxReportedCells) c.first_wrong.push_back({i, j, k, want[at], float(got[at])});
                bool near_any = false;
                for (int a = 0; a < 3; ++a) {
                    if (x[a] <= reach) ++pattern.near_face[a][0], near_any = true;
                    if (x[a] >= N - 1 - reach) ++pattern.near_face[a][1], near_any = true;
                }
                pattern.near_any_face += near_any;
                if (tiled) {
                    bool near_edge = false;
                    for (int a = 0; a < 3; ++a) {
                        if (tile[a] == 0 || tile[a] >= N - 2) continue;  // one tile along this axis: no inner edges
                        unsigned offset = (x[a] - tile_start[a]) % tile[a];
                        near_edge |= offset < reach || offset + reach >= tile[a];
                    }
                    pattern.near_tile_edge += near_edge;
                }
            }

    if (c.ok()) return c;
    // The likely cause, most specific first.
    const size_t state_cells = interior_cells(N);
    if (c.wrong > 0 && c.unwritten == c.wrong) {
        c.hint = "these state cells were never written (they still hold the NaN poison): the step's threads must "
                 "cover every cell 1..N-2 along each axis";
    } else if (c.wrong > 0 && !ref.initial.empty()) {
        const std::string n = std::to_string(ref.steps), short_one = std::to_string(ref.steps - 1);
        if (ref.steps == 2 && same_state(got, ref.before_last, N, c.tolerance))
            c.hint = "the output equals the state after ONE step, not 2: either the buffers are not swapped between "
                     "steps, or the answer is in the other buffer (return the one the last step wrote)";
        else if (ref.steps >= 1 && same_state(got, ref.before_last, N, c.tolerance))
            c.hint = "the output equals the state after " + short_one + " step(s), one short of " + n +
                     ": the answer is in the other buffer; return the buffer the last step wrote (which one "
                     "depends on whether the step count is odd or even)";
        else if (ref.steps >= 2 && same_state(got, ref.initial, N, c.tolerance))
            c.hint = "the output is the initial state: the steps wrote into the other buffer, but the result points "
                     "at the input (are the buffers swapped after each step, and is the result the newest one?)";
        else if (ref.steps >= 3 && same_state(got, ref.after_one, N, c.tolerance))
            c.hint = "the output equals the state after ONE step, not " + n +
                     ": every step read the initial grid again; swap the two buffers after each step";
        else if (long m = steps_matching(got, ref, N, c.tolerance); m >= 0 && unsigned(m) < ref.steps) {
            const std::string missing = std::to_string(ref.steps - m);
            c.hint = m == 0 ? "the output is the initial state: no step seems to have run"
                            : "the output equals the state after " + std::to_string(m) + " of the " + n +
                                  " steps: the last " + (ref.steps - m == 1 ? "step" : missing + " steps") +
                                  " never ran";
            if (tiled)
                c.hint += " (with S steps fused per pass, " + n + " steps are ⌊" + n + "/S⌋ passes and then " + n +
                          " mod S single steps: does the loop launch them all, and is the result the grid the "
                          "last launch wrote?)";
            else
                c.hint += " (does the loop run all " + n + " steps?)";
        } else if (m > 0) {
            c.hint = "the output equals the state after " + std::to_string(m) + " steps, not " + n + ": " +
                     std::to_string(m - ref.steps) + (m - ref.steps == 1 ? " step" : " steps") + " too many ran" +
                     (tiled ? " (do the passes stop where the single steps begin, and do the single steps stop at "
                              "the step count?)"
                            : " (does the loop stop after " + n + " steps?)");
        }
    }
    if (c.hint.empty() && ghosts_broken > 0) {
        int axis = 0, side = 0;
        for (int a = 0; a < 3; ++a)
            for (int s = 0; s < 2; ++s)
                if (ghost_faces[a][s] > ghost_faces[axis][side]) axis = a, side = s;
        c.hint = ghost_hint(bc, axis, side);
    }
    if (c.hint.empty() && c.wrong > 0 && pattern.near_any_face == c.wrong && c.wrong < state_cells) {
        for (int a = 0; a < 3 && c.hint.empty(); ++a)
            for (int s = 0; s < 2 && c.hint.empty(); ++s)
                if (pattern.near_face[a][s] == c.wrong) c.hint = face_hint(bc, a, s, ref.steps);
        if (c.hint.empty())
            c.hint = "all wrong cells lie within " + std::to_string(reach) + " cell(s) of the domain's faces: check "
                     "how the " + std::string(boundary_name(bc)) + " ghosts are written after each step";
    }
    if (c.hint.empty() && tiled && c.wrong > 0 && pattern.near_tile_edge == c.wrong && c.wrong < state_cells)
        c.hint = "all wrong cells lie within " + std::to_string(reach) + " cell(s) of the edge of a block's tile: "
                 "the halo is narrower than the number of fused steps, or a level was computed from a neighbour "
                 "that had not reached it yet";
    if (c.hint.empty() && c.wrong * 10 >= state_cells * 9)
        c.hint = "nearly every cell is wrong: check the update u + r·(sum of the six neighbours - 6u) and the "
                 "index of each neighbour";
    return c;
}

std::string describe_heat_failure(const HeatCheck& c) {
    std::ostringstream s;
    if (c.wrong > 0) {
        s << c.wrong << " state cell(s) wrong after " << c.steps << " step(s)";
        if (c.unwritten > 0) s << " (" << c.unwritten << " never written)";
        s << "; first ones as (i, j, k): expected / got\n";
        for (const WrongCell& w : c.first_wrong)
            s << "    (" << w.i << ", " << w.j << ", " << w.k << "): " << w.expected << " / " << w.got << "\n";
    }
    if (c.ghosts_wrong > 0) s << c.ghosts_wrong << " ghost cell(s) wrong\n";
    if (!c.hint.empty()) s << "hint: " << c.hint << "\n";
    return s.str();
}
