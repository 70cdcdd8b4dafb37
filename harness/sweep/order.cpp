#include "sweep/order.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "common/grid.h"

namespace {

// The offset (di, dj, dk) of direction `dir` at distance d.
void offset(int dir, int d, int o[3]) {
    o[0] = o[1] = o[2] = 0;
    const int axis = 2 - dir / 2;  // k-1, k+1 -> axis 2 (k); j -> 1; i -> 0
    o[axis] = dir % 2 ? d : -d;
}

// A hypothesis about what a wrong kernel computes: a weighted sum of neighbours at any offsets.
struct Term {
    double w;
    int o[3];
};
struct Hypothesis {
    std::vector<Term> terms;
    std::string hint;
};

std::vector<Term> star_terms(unsigned R, const double* w) {
    std::vector<Term> t{{w[0], {0, 0, 0}}};
    for (unsigned d = 1; d <= R; ++d)
        for (int dir = 0; dir < 6; ++dir) {
            Term x{w[star_weight(int(d), dir)], {}};
            offset(dir, int(d), x.o);
            t.push_back(x);
        }
    return t;
}

// Does the hypothesis give every sampled wrong value? An offset that leaves the grid rules it out.
bool explains(const float* in, unsigned N, const std::vector<Term>& terms, const std::vector<WrongCell>& cells) {
    for (const WrongCell& c : cells) {
        double sum = 0;
        for (const Term& t : terms) {
            long x[3] = {long(c.i) + t.o[0], long(c.j) + t.o[1], long(c.k) + t.o[2]};
            for (long v : x)
                if (v < 0 || v >= long(N)) return false;
            sum += t.w * in[grid_index(N, unsigned(x[0]), unsigned(x[1]), unsigned(x[2]))];
        }
        if (!close_enough(sum, c.got)) return false;
    }
    return true;
}

const char* const kAxis = "ijk";

std::string offset_name(const int o[3]) {
    for (int a = 0; a < 3; ++a)
        if (o[a] != 0) return std::string(1, kAxis[a]) + (o[a] > 0 ? "+" : "-") + std::to_string(std::abs(o[a]));
    return "centre";
}

// Why a term that belongs at offset `want` reads offset `got`.
std::string misplaced(const int want[3], const int got[3]) {
    int wa = -1, ga = -1;
    for (int a = 0; a < 3; ++a) {
        if (want[a]) wa = a;
        if (got[a]) ga = a;
    }
    if (wa >= 0 && ga >= 0 && wa != ga)
        return "a neighbour on the wrong axis (a step of one in k is 1 float, in j N floats, in i N·N floats)";
    if (wa >= 0 && ga == wa && (want[wa] > 0) != (got[ga] > 0) && std::abs(want[wa]) == std::abs(got[ga]))
        return "a neighbour on the wrong side (- and + exchanged)";
    return "a neighbour at the wrong distance (check the offset d in its index)";
}

std::vector<Hypothesis> hypotheses(unsigned R, const double* w) {
    const std::vector<Term> star = star_terms(R, w);
    const size_t P = star.size();
    std::vector<Hypothesis> h;
    // One term reads another point of the star: at the wrong distance, on the wrong axis or side.
    for (size_t a = 1; a < P; ++a)
        for (size_t b = 0; b < P; ++b) {
            if (a == b) continue;
            Hypothesis x{star, ""};
            std::copy(star[b].o, star[b].o + 3, x.terms[a].o);
            x.hint = "the values match the stencil with its " + offset_name(star[a].o) + " term (weight w[" +
                     std::to_string(a) + "]) reading the " + offset_name(star[b].o) + " cell: " +
                     misplaced(star[a].o, star[b].o);
            h.push_back(x);
        }
    // Two weights exchanged.
    for (size_t a = 0; a < P; ++a)
        for (size_t b = a + 1; b < P; ++b) {
            Hypothesis x{star, ""};
            std::swap(x.terms[a].w, x.terms[b].w);
            x.hint = "the values match the stencil with the weights of its " + offset_name(star[a].o) + " and " +
                     offset_name(star[b].o) + " terms exchanged (w[" + std::to_string(a) + "] and w[" +
                     std::to_string(b) + "]): " + (a == 0 ? std::string("a misplaced term") : misplaced(star[a].o, star[b].o)) +
                     "; w[star_weight(d, dir)] goes with the neighbour at distance d in direction dir";
            h.push_back(x);
        }
    // One term missing; all terms at one distance missing.
    for (size_t a = 0; a < P; ++a) {
        Hypothesis x{star, ""};
        x.terms[a].w = 0;
        x.hint = "the values match the stencil without its " + offset_name(star[a].o) + " term (weight w[" +
                 std::to_string(a) + "])";
        h.push_back(x);
    }
    for (unsigned d = 1; d <= R && R > 1; ++d) {
        Hypothesis x{star, ""};
        for (int dir = 0; dir < 6; ++dir) x.terms[size_t(star_weight(int(d), dir))].w = 0;
        x.hint = "the values match the stencil without its six terms at distance " + std::to_string(d) +
                 ": the loop over distances must run d = 1..R (R = " + std::to_string(R) + ")";
        h.push_back(x);
    }
    // Every distance off by one, along one axis or all three (in[k - (d-1)] for in[k - d], ...).
    for (int shift : {-1, +1})
        for (int axis = -1; axis < 3; ++axis) {
            Hypothesis x{star, ""};
            for (size_t a = 1; a < P; ++a)
                for (int b = 0; b < 3; ++b)
                    if (x.terms[a].o[b] != 0 && (axis < 0 || axis == b))
                        x.terms[a].o[b] += x.terms[a].o[b] > 0 ? shift : -shift;
            x.hint = std::string("the values match the stencil with every neighbour ") +
                     (axis < 0 ? std::string("") : std::string("along ") + kAxis[axis] + " ") + "read " +
                     (shift > 0 ? "one cell further out" : "one cell nearer") +
                     " than its distance d: neighbours at the wrong distance (d+1 or d-1 in the index)";
            h.push_back(x);
        }
    return h;
}

// Where wrong cells lie, to tell a halo mistake from a mapping or weight mistake.
bool on_face(unsigned x, unsigned R, unsigned size, unsigned origin) {
    if (size == 0 || x < origin) return false;
    unsigned offset = (x - origin) % size;
    return offset < R || offset + R >= size;
}

}  // namespace

StarCoefficients random_star_coefficients(uint64_t seed, unsigned R) {
    uint64_t state = seed ^ 0x57A25EEDull ^ (uint64_t(R) << 40);
    StarCoefficients c{};
    const int P = star_points(int(R));
    for (int n = 0; n < P;) {
        float candidate = float(0.1 + 0.9 * uniform01(state));
        if (std::all_of(c.w, c.w + n, [&](float x) { return std::fabs(x - candidate) >= kStarMargin; }))
            c.w[n++] = candidate;
    }
    return c;
}

std::string star_term_name(unsigned n) {
    if (n == 0) return "centre";
    int o[3];
    offset(int((n - 1) % 6), int((n - 1) / 6 + 1), o);
    return offset_name(o);
}

double star_point(const float* in, unsigned N, unsigned R, const double* w, unsigned i, unsigned j, unsigned k) {
    double sum = w[0] * in[grid_index(N, i, j, k)];
    for (unsigned d = 1; d <= R; ++d) {
        sum += w[star_weight(int(d), kMinusK)] * in[grid_index(N, i, j, k - d)];
        sum += w[star_weight(int(d), kPlusK)] * in[grid_index(N, i, j, k + d)];
        sum += w[star_weight(int(d), kMinusJ)] * in[grid_index(N, i, j - d, k)];
        sum += w[star_weight(int(d), kPlusJ)] * in[grid_index(N, i, j + d, k)];
        sum += w[star_weight(int(d), kMinusI)] * in[grid_index(N, i - d, j, k)];
        sum += w[star_weight(int(d), kPlusI)] * in[grid_index(N, i + d, j, k)];
    }
    return sum;
}

double star_reference_point(const float* in, unsigned N, unsigned R, const StarCoefficients& c, unsigned i,
                            unsigned j, unsigned k) {
    double w[1 + 6 * kMaxOrder];
    for (int n = 0; n < star_points(int(R)); ++n) w[n] = c.w[n];
    return star_point(in, N, R, w, i, j, k);
}

void poison_output_order(const float* in, float* out, unsigned N, unsigned R) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                out[at] = is_star_boundary(N, R, i, j, k) ? in[at] : nan;
            }
}

CheckResult check_output_order(const float* in, const float* out, unsigned N, unsigned R, const StarCoefficients& c,
                               const TileShape& tiles) {
    CheckResult r;
    r.boundary_width = R;
    double w[1 + 6 * kMaxOrder];
    for (int n = 0; n < star_points(int(R)); ++n) w[n] = c.w[n];
    size_t near_boundary = 0, on_tile_face = 0;
    std::vector<WrongCell> sample;  // wrong cells with a number in them, for the hints
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                if (is_star_boundary(N, R, i, j, k)) {
                    if (!(out[at] == in[at])) ++r.boundary_modified;  // bits: left exactly as the input
                    continue;
                }
                double expected = star_point(in, N, R, w, i, j, k);
                if (!count_cell(r, sample, {i, j, k, expected, out[at]})) continue;
                const unsigned x[3] = {i, j, k};
                bool near = false, face = false;
                for (int a = 0; a < 3; ++a) {
                    near = near || x[a] < 2 * R || x[a] + 2 * R >= N;  // its stencil reaches the boundary
                    face = face || on_face(x[a], R, tiles.size[a], tiles.origin[a]);
                }
                near_boundary += near;
                on_tile_face += face;
            }
    if (r.wrong == 0) return r;
    const size_t interior = star_interior_cells(N, R);
    // A thread-to-cell mapping shifted by one: each wrong value is a neighbour cell's expected value.
    for (int a = 0; a < 3 && r.hint.empty() && !sample.empty(); ++a)
        for (int step : {-1, +1}) {
            bool all = true;
            for (const WrongCell& cell : sample) {
                long x[3] = {long(cell.i), long(cell.j), long(cell.k)};
                x[a] += step;
                if (x[a] < long(R) || x[a] + long(R) >= long(N) ||
                    !close_enough(star_point(in, N, R, w, unsigned(x[0]), unsigned(x[1]), unsigned(x[2])), cell.got)) {
                    all = false;
                    break;
                }
            }
            if (all) {
                std::ostringstream s;
                s << "each wrong value is the expected value of the cell one step " << (step > 0 ? "up" : "down")
                  << " in " << kAxis[a] << " (" << kAxis[a] << (step > 0 ? "+1" : "-1")
                  << "): the thread-to-cell mapping is shifted by one; check the -R/+R for the halo in the " << kAxis[a]
                  << " index";
                r.hint = s.str();
                break;
            }
        }
    if (r.hint.empty() && !sample.empty())
        for (const Hypothesis& h : hypotheses(R, w))
            if (explains(in, N, h.terms, sample)) {
                r.hint = h.hint;
                break;
            }
    if (!r.hint.empty()) return r;
    if (r.wrong == on_tile_face && on_tile_face < interior)
        r.hint = "only cells within R = " + std::to_string(R) +
                 " of the faces of output tiles are wrong: the halo of the input tile (R cells wide) is not loaded, "
                 "or loaded from the wrong place";
    else if (r.wrong == near_boundary && near_boundary < interior)
        r.hint = "only cells within R = " + std::to_string(R) +
                 " of the grid boundary are wrong: check the guards (i, j, k >= R and <= N-1-R for outputs, >= 0 and "
                 "< N for loads)";
    else if (r.unwritten == r.wrong)
        r.hint = "these cells were never written (they still hold the NaN poison): check that the launch covers "
                 "every interior cell (R..N-1-R along each axis) and that the if-conditions do not turn those threads "
                 "off";
    else if (r.wrong * 10 >= interior * 9)
        r.hint = "nearly every cell is wrong: check the index arithmetic and that w[star_weight(d, dir)] multiplies "
                 "the neighbour at distance d in direction dir";
    return r;
}

const char* order_kernel_name(OrderKernel k) {
    switch (k) {
    case OrderKernel::Basic: return "basic";
    case OrderKernel::Tiled: return "tiled";
    case OrderKernel::Fast: return "fast";
    }
    return "unknown";
}

OpbModel order_opb(OrderKernel k, unsigned R, const OrderTiles& t) {
    const double flops = star_flops(int(R));
    std::ostringstream s;
    switch (k) {
    case OrderKernel::Basic:
        s << "(12R+1) / (4·(6R+1)) = " << star_flops(int(R)) << " / (4·" << star_points(int(R)) << "), R = " << R;
        return {flops / (4.0 * star_points(int(R))), s.str()};
    case OrderKernel::Tiled: {
        double out = double(t.T - 2 * R) * (t.T - 2 * R) * t.Z, in = double(t.T) * t.T * (t.Z + 2 * R);
        s << "(12R+1)·(T-2R)²·Z / (4·T²·(Z+2R)), R = " << R << ", T = " << t.T << ", Z = " << t.Z;
        return {flops * out / (4.0 * in), s.str()};
    }
    case OrderKernel::Fast: {
        double loads = 1.0 + 2.0 * R / t.Z + 2.0 * R / t.BY + 8.0 / t.BX;
        s << "(12R+1) / (4·(1 + 2R/Z + 2R/BY + 8/BX)), R = " << R << ", Z = " << t.Z << ", BX×BY = " << t.BX << "×"
          << t.BY;
        return {flops / (4.0 * loads), s.str()};
    }
    }
    return {0, "unknown"};
}
