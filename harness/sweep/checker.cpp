#include "sweep/checker.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "common/grid.h"
#include "sweep/reference.h"

namespace {

// Where wrong cells lie, to tell a halo mistake from a mapping or coefficient mistake.
struct Pattern {
    size_t next_to_grid_boundary = 0;  // an index is 1 or N-2
    size_t on_tile_face = 0;           // on the first or last row/column/plane of an output tile
    size_t past_last_full_tile = 0;    // in the partial tile at the far end of some axis
};

// Output tiles are aligned at cell 0, as in the book: tile b covers b*T .. b*T + T-1
// (its input tile starts one cell earlier, at the halo).
bool on_face(unsigned x, unsigned N, unsigned tile) {
    unsigned offset = x % tile;
    return offset == 0 || offset == tile - 1 || x == 1 || x == N - 2;
}

bool past_full_tiles(unsigned x, unsigned N, unsigned tile) {
    return x >= (N - 1) / tile * tile;  // cells 0..N-2 need covering; this is the partial tile
}

// Does `got` look like the stencil with different weights `w` (a swap or a dropped term)?
bool explains(const float* in, unsigned N, const std::vector<WrongCell>& cells, const double w[7]) {
    for (const WrongCell& c : cells)
        if (!close_enough(stencil_point(in, N, w, c.i, c.j, c.k), c.got)) return false;
    return true;
}

std::string weight_hint(const float* in, unsigned N, const Coefficients& coeff,
                        const std::vector<WrongCell>& cells) {
    double w[7];
    coefficient_array(coeff, w);
    for (int a = 0; a < 7; ++a)
        for (int b = a + 1; b < 7; ++b) {
            double s[7];
            for (int n = 0; n < 7; ++n) s[n] = w[n];
            std::swap(s[a], s[b]);
            if (explains(in, N, cells, s))
                return std::string("the values match the stencil with c") + char('0' + a) + " and c" +
                       char('0' + b) + " exchanged: the " + kNeighbours[a].name + " and " + kNeighbours[b].name +
                       " terms are swapped (c0..c6 go with centre, k-1, k+1, j-1, j+1, i-1, i+1)";
        }
    for (int a = 0; a < 7; ++a) {
        double s[7];
        for (int n = 0; n < 7; ++n) s[n] = w[n];
        s[a] = 0;
        if (explains(in, N, cells, s))
            return std::string("the values match the stencil without its c") + char('0' + a) + " term (the " +
                   kNeighbours[a].name + " neighbour is missing)";
    }
    return "";
}

std::string shift_hint(const float* in, unsigned N, const Coefficients& coeff, const std::vector<WrongCell>& cells) {
    static const char* axis = "ijk";
    for (int a = 0; a < 3; ++a)
        for (int step : {-1, +1}) {
            bool all = true;
            for (const WrongCell& c : cells) {
                unsigned x[3] = {c.i, c.j, c.k};
                long moved = long(x[a]) + step;
                if (moved < 1 || moved > long(N) - 2) { all = false; break; }
                x[a] = unsigned(moved);
                if (!close_enough(reference_point(in, N, coeff, x[0], x[1], x[2]), c.got)) { all = false; break; }
            }
            if (all) {
                std::ostringstream s;
                s << "each wrong value is the expected value of the cell one step " << (step > 0 ? "up" : "down")
                  << " in " << axis[a] << " (" << axis[a] << (step > 0 ? "+1" : "-1")
                  << "): the thread-to-cell mapping is shifted by one; check the -1/+1 for the halo in the "
                  << axis[a] << " index";
                return s.str();
            }
        }
    return "";
}

std::string location_hint(const CheckResult& r, const Pattern& p, size_t interior, unsigned tile) {
    if (tile > 0 && r.wrong == p.past_last_full_tile && p.past_last_full_tile < interior)
        return "only cells in the last, partial tile are wrong: the output tiles must reach cell N-2, so round the "
               "number of blocks up (ceil_div), and guard the loads by the grid size N, not by the tile size";
    if (tile > 0 && r.wrong == p.on_tile_face && p.on_tile_face < interior)
        return "only cells on the faces of output tiles are wrong: the halo of the input tile is not loaded, "
               "or loaded from the wrong place";
    if (r.wrong == p.next_to_grid_boundary && p.next_to_grid_boundary < interior)
        return "only cells next to the grid boundary are wrong: check the guards (i, j, k >= 1 and <= N-2 for "
               "outputs, >= 0 and < N for loads)";
    if (r.unwritten == r.wrong)
        return "these cells were never written (they still hold the NaN poison): check that the launch covers "
               "every interior cell and that the if-conditions do not turn those threads off";
    if (r.wrong * 10 >= interior * 9)
        return "nearly every cell is wrong: check the index arithmetic and that c0..c6 multiply the centre, "
               "k-1, k+1, j-1, j+1, i-1, i+1 neighbours in that order";
    return "";
}

}  // namespace

void poison_output(const float* in, float* out, unsigned N) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                out[at] = is_boundary(N, i, j, k) ? in[at] : nan;
            }
}

bool count_cell(CheckResult& r, std::vector<WrongCell>& sample, const WrongCell& cell) {
    const double rel = std::isnan(cell.got) ? std::numeric_limits<double>::infinity()
                                            : std::fabs(cell.got - cell.expected) / std::fabs(cell.expected);
    if (rel > r.max_rel_err) r.max_rel_err = rel;
    if (rel <= kTolerance) return false;
    ++r.wrong;
    if (std::isnan(cell.got)) ++r.unwritten;
    else if (sample.size() < 16) sample.push_back(cell);
    if (r.first_wrong.size() < kMaxReportedCells) r.first_wrong.push_back(cell);
    return true;
}

CheckResult check_output(const float* in, const float* out, unsigned N, const Coefficients& c,
                         unsigned out_tile_dim) {
    CheckResult r;
    Pattern p;
    std::vector<WrongCell> sample;  // wrong cells with a number in them, for the hints
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                if (is_boundary(N, i, j, k)) {
                    // Compare bits: the boundary must be left exactly as the input.
                    if (!(out[at] == in[at])) ++r.boundary_modified;
                    continue;
                }
                double expected = reference_point(in, N, c, i, j, k);
                if (!count_cell(r, sample, {i, j, k, expected, out[at]})) continue;
                if (i == 1 || j == 1 || k == 1 || i == N - 2 || j == N - 2 || k == N - 2) ++p.next_to_grid_boundary;
                if (out_tile_dim > 0) {
                    if (on_face(i, N, out_tile_dim) || on_face(j, N, out_tile_dim) || on_face(k, N, out_tile_dim))
                        ++p.on_tile_face;
                    if (past_full_tiles(i, N, out_tile_dim) || past_full_tiles(j, N, out_tile_dim) ||
                        past_full_tiles(k, N, out_tile_dim))
                        ++p.past_last_full_tile;
                }
            }
    if (r.wrong == 0) return r;
    if (!sample.empty()) r.hint = shift_hint(in, N, c, sample);
    if (r.hint.empty() && !sample.empty()) r.hint = weight_hint(in, N, c, sample);
    if (r.hint.empty()) r.hint = location_hint(r, p, interior_cells(N), out_tile_dim);
    return r;
}

std::string describe_failure(const CheckResult& r) {
    std::ostringstream s;
    if (r.wrong > 0) {
        s << r.wrong << " interior cell(s) wrong";
        if (r.unwritten > 0) s << " (" << r.unwritten << " never written)";
        s << "; first ones as (i, j, k): expected / got\n";
        for (const WrongCell& c : r.first_wrong)
            s << "    (" << c.i << ", " << c.j << ", " << c.k << "): " << c.expected << " / " << c.got << "\n";
    }
    if (r.boundary_modified > 0 && r.boundary_width == 1)
        s << r.boundary_modified << " boundary cell(s) changed: a sweep must not write cells with i, j or k "
          << "equal to 0 or N-1 (they hold the boundary conditions)\n";
    else if (r.boundary_modified > 0)
        s << r.boundary_modified << " boundary cell(s) changed: a sweep of order " << r.boundary_width
          << " must not write cells with i, j or k below " << r.boundary_width << " or above N-1-"
          << r.boundary_width << " (they hold the boundary conditions)\n";
    if (r.guard_violated)
        s << "a write landed outside the output array (the guard bytes around it changed): a thread with an "
          << "index past the grid wrote anyway; run compute-sanitizer to find it\n";
    if (r.input_modified) s << "the input grid changed: the kernel must only read `in`\n";
    if (!r.hint.empty()) s << "hint: " << r.hint << "\n";
    return s.str();
}
