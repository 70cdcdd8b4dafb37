// Stage 10's CPU side: the reference of order R against closed forms, the OP/B models at each R
// (the book's 19-point bound under its own convention, chapters/ERRATA.md E2), and the checker
// naming a neighbour at the wrong distance or on the wrong axis.
#include <cmath>
#include <string>
#include <vector>

#include "check.h"
#include "common/grid.h"
#include "sweep/model.h"
#include "sweep/order.h"

namespace {
bool near(double x, double y, double tol = 0.005) { return std::fabs(x - y) < tol; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Central finite-difference weights of the second derivative with R points on each side
// (accurate to O(h^2R), exact for polynomials of degree <= 2R + 1): a[0] the centre, a[d] at ±d.
const double kSecondDerivative[5][5] = {
    {0, 0, 0, 0, 0},
    {-2.0, 1.0, 0, 0, 0},
    {-5.0 / 2, 4.0 / 3, -1.0 / 12, 0, 0},
    {-49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90, 0},
    {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560},
};

// The Laplacian of order R: the second derivative along each axis, summed.
std::vector<double> laplacian(unsigned R) {
    std::vector<double> w(static_cast<size_t>(star_points(int(R))));
    w[0] = 3 * kSecondDerivative[R][0];
    for (unsigned d = 1; d <= R; ++d)
        for (int dir = 0; dir < 6; ++dir) w[size_t(star_weight(int(d), dir))] = kSecondDerivative[R][d];
    return w;
}

// A correct sweep of order R with weights w, the boundary as poison_output_order leaves it.
std::vector<float> sweep(const std::vector<float>& in, unsigned N, unsigned R, const double* w) {
    std::vector<float> out(in.size());
    poison_output_order(in.data(), out.data(), N, R);
    for (unsigned i = R; i < N - R; ++i)
        for (unsigned j = R; j < N - R; ++j)
            for (unsigned k = R; k < N - R; ++k) out[grid_index(N, i, j, k)] = float(star_point(in.data(), N, R, w, i, j, k));
    return out;
}
}  // namespace

int main() {
    // The weights' layout: R = 1 is stages 02-06's c0..c6 (centre, k-1, k+1, j-1, j+1, i-1, i+1).
    CHECK(star_weight(1, kMinusK) == 1 && star_weight(1, kPlusI) == 6 && star_weight(4, kPlusI) == 24);
    CHECK(star_points(3) == 19 && star_flops(3) == 37 && star_points(4) == 25);
    CHECK(star_term_name(0) == "centre" && star_term_name(1) == "k-1" && star_term_name(16) == "j+3" &&
          star_term_name(23) == "i-4");

    for (unsigned R = 1; R <= kMaxOrder; ++R) {
        const unsigned N = 2 * R + 5;
        std::vector<float> in(grid_cells(N));
        const std::vector<double> lap = laplacian(R);

        // A polynomial of degree 2R in each variable: the order-R Laplacian is exact (the weights
        // are exact to degree 2R + 1), so at every interior cell it gives f_ii + f_jj + f_kk.
        // Centred on the middle of the grid, every value is exact in float (below 2^23).
        const double mid = N / 2;
        auto f = [&](double x) { return std::pow(x - mid, 2 * R) + 0.5 * x; };
        auto f2 = [&](double x) { return 2.0 * R * (2 * R - 1) * std::pow(x - mid, 2 * R - 2); };
        for (unsigned i = 0; i < N; ++i)
            for (unsigned j = 0; j < N; ++j)
                for (unsigned k = 0; k < N; ++k) in[grid_index(N, i, j, k)] = float(f(i) + 2 * f(j) - f(k));
        double worst = 0;
        for (unsigned i = R; i < N - R; ++i)
            for (unsigned j = R; j < N - R; ++j)
                for (unsigned k = R; k < N - R; ++k) {
                    double exact = f2(i) + 2 * f2(j) - f2(k);
                    worst = std::max(worst, std::fabs(star_point(in.data(), N, R, lap.data(), i, j, k) - exact));
                }
        CHECK(worst < 1e-6);
        // A constant field: the weights' sum; the Laplacian's is 0.
        std::fill(in.begin(), in.end(), 2.0f);
        const StarCoefficients c = random_star_coefficients(5, R);
        double sum = 0;
        for (int n = 0; n < star_points(int(R)); ++n) sum += c.w[n];
        CHECK(near(star_reference_point(in.data(), N, R, c, R, N / 2, N - 1 - R), 2 * sum, 1e-12));
        CHECK(std::fabs(star_point(in.data(), N, R, lap.data(), N / 2, N / 2, N / 2)) < 1e-12);
        // A single 1 among zeros gives back each weight at the cell whose star reaches it.
        const unsigned N1 = 4 * R + 3, m = N1 / 2;  // m ± R are interior cells
        in.assign(grid_cells(N1), 0.0f);
        in[grid_index(N1, m, m, m)] = 1.0f;
        CHECK(star_reference_point(in.data(), N1, R, c, m, m, m) == double(c.w[0]));
        CHECK(star_reference_point(in.data(), N1, R, c, m, m, m + R) == double(c.w[star_weight(int(R), kMinusK)]));
        CHECK(star_reference_point(in.data(), N1, R, c, m, m - R, m) == double(c.w[star_weight(int(R), kPlusJ)]));
        CHECK(star_reference_point(in.data(), N1, R, c, m + 1, m, m) == double(c.w[star_weight(1, kMinusI)]));
        // The weights: 6R + 1 of them in [0.1, 1.0), pairwise at least kStarMargin apart, the rest 0.
        for (uint64_t seed = 0; seed < 20; ++seed) {
            const StarCoefficients w = random_star_coefficients(seed, R);
            for (int p = 0; p < star_points(int(R)); ++p) {
                CHECK(w.w[p] >= 0.1f && w.w[p] < 1.0f);
                for (int q = p + 1; q < star_points(int(R)); ++q) CHECK(std::fabs(w.w[p] - w.w[q]) >= kStarMargin);
            }
            for (int p = star_points(int(R)); p < star_points(int(kMaxOrder)); ++p) CHECK(w.w[p] == 0.0f);
        }

        // The OP/B models at R. R = 1 gives stages 02 and 05's figures (0.46, 2.68).
        const double flops = 12.0 * R + 1;
        CHECK(near(order_opb(OrderKernel::Basic, R, {}).opb, flops / (4 * (6.0 * R + 1))));
        const unsigned T = 32, Z = T - 2 * R;
        const double tiled = order_opb(OrderKernel::Tiled, R, {T, Z, 0, 0}).opb;
        CHECK(near(tiled, flops * std::pow(double(T - 2 * R) / T, 3) / 4));  // Z = T - 2R: the cube formula
        CHECK(tiled < order_opb_bound(R));
        CHECK(near(order_opb(OrderKernel::Fast, R, {0, 32, 64, 8}).opb,
                   flops / (4 * (1 + 2.0 * R / 32 + 2.0 * R / 8 + 8.0 / 64))));
        CHECK(near(order_opb_bound(R), flops / 4));
        CHECK(contains(order_opb(OrderKernel::Tiled, R, {T, Z, 0, 0}).formula, "R = " + std::to_string(R)));
    }
    CHECK(near(order_opb(OrderKernel::Basic, 1, {}).opb, textbook_opb(OpbFormula::Basic, 0, 1).opb));
    CHECK(near(order_opb(OrderKernel::Tiled, 1, {32, 30, 0, 0}).opb, textbook_opb(OpbFormula::PlaneTile, 32, 30).opb));
    CHECK(near(order_opb(OrderKernel::Tiled, 1, {32, 30, 0, 0}).opb, 2.68));
    CHECK(near(order_opb_bound(1), kOpbBound));
    // The book's bound for the 19-point stencil (R = 3), 9.5 OP/B, counts 2 operations per point
    // (2·19/4); the chapter's 13-operation convention for 7 points gives (12R+1)/4 = 37/4 = 9.25.
    // chapters/ERRATA.md, E2.
    CHECK(near(2.0 * star_points(3) / 4, 9.5) && near(order_opb_bound(3), 9.25));
    CHECK(near(order_opb(OrderKernel::Tiled, 4, {32, 24, 0, 0}).opb, 49 * 24.0 * 24 * 24 / (4 * 32.0 * 32 * 32)));

    // The checker at each order: a correct sweep passes; a neighbour at the wrong distance, on
    // the wrong axis, or a weight at the wrong distance fails with the hint that says so.
    for (unsigned R = 1; R <= kMaxOrder; ++R) {
        const unsigned N = 2 * R + 10;
        std::vector<float> in(grid_cells(N));
        fill_random(in, 3 + R);
        const StarCoefficients c = random_star_coefficients(3, R);
        std::vector<double> w(c.w, c.w + star_points(int(R)));
        const TileShape none;
        CheckResult r = check_output_order(in.data(), sweep(in, N, R, w.data()).data(), N, R, c, none);
        CHECK(r.ok() && r.max_rel_err < 1e-6 && r.boundary_width == R);

        std::vector<float> poisoned(in.size());
        poison_output_order(in.data(), poisoned.data(), N, R);
        r = check_output_order(in.data(), poisoned.data(), N, R, c, none);
        CHECK(r.unwritten == star_interior_cells(N, R) && contains(r.hint, "never written"));
        CHECK(poisoned[grid_index(N, R - 1, N / 2, N / 2)] == in[grid_index(N, R - 1, N / 2, N / 2)]);

        // A boundary cell R-1 from the face written: the message names the width R.
        std::vector<float> out = sweep(in, N, R, w.data());
        out[grid_index(N, N / 2, N - R, N / 2)] += 1.0f;
        r = check_output_order(in.data(), out.data(), N, R, c, none);
        CHECK(!r.ok() && r.boundary_modified == 1 && r.wrong == 0);
        CHECK(contains(describe_failure(r), "order " + std::to_string(R)) || R == 1);

        // The kernel writes a stencil whose k+R term reads the j+R neighbour (wrong axis). It is
        // computed here with the real weights but the term moved: a sweep with custom offsets.
        auto planted = [&](int from_dir, int from_d, int to_dir, int to_d) {
            std::vector<float> o(in.size());
            poison_output_order(in.data(), o.data(), N, R);
            std::vector<double> v = w;
            const int a = star_weight(from_d, from_dir);
            const double moved = v[size_t(a)];
            v[size_t(a)] = 0;
            for (unsigned i = R; i < N - R; ++i)
                for (unsigned j = R; j < N - R; ++j)
                    for (unsigned k = R; k < N - R; ++k) {
                        const int axis = 2 - to_dir / 2, sign = to_dir % 2 ? 1 : -1;
                        long x[3] = {long(i), long(j), long(k)};
                        x[axis] += sign * to_d;
                        o[grid_index(N, i, j, k)] =
                            float(star_point(in.data(), N, R, v.data(), i, j, k) +
                                  moved * in[grid_index(N, unsigned(x[0]), unsigned(x[1]), unsigned(x[2]))]);
                    }
            return o;
        };
        r = check_output_order(in.data(), planted(kPlusK, int(R), kPlusJ, int(R)).data(), N, R, c, none);
        CHECK(!r.ok() && contains(r.hint, "wrong axis") && contains(r.hint, "k+" + std::to_string(R)));
        if (R >= 2) {
            // The i-3 term reads i-2 (say, in[(i - d + 1)·N·N ...] for the last d): wrong distance.
            r = check_output_order(in.data(), planted(kMinusI, int(R), kMinusI, int(R) - 1).data(), N, R, c, none);
            CHECK(!r.ok() && contains(r.hint, "wrong distance") && contains(r.hint, "i-" + std::to_string(R)));
            // The weights of j-1 and j-2 exchanged.
            std::vector<double> s = w;
            std::swap(s[size_t(star_weight(1, kMinusJ))], s[size_t(star_weight(2, kMinusJ))]);
            r = check_output_order(in.data(), sweep(in, N, R, s.data()).data(), N, R, c, none);
            CHECK(!r.ok() && contains(r.hint, "exchanged") && contains(r.hint, "wrong distance"));
            // The loop over d stops at R-1.
            s = w;
            for (int dir = 0; dir < 6; ++dir) s[size_t(star_weight(int(R), dir))] = 0;
            r = check_output_order(in.data(), sweep(in, N, R, s.data()).data(), N, R, c, none);
            CHECK(contains(r.hint, "distance " + std::to_string(R)));
        }
        // Every neighbour one cell further out than its d along k (in[k - d - 1] for in[k - d]).
        if (N > 4 * R + 2) {
            std::vector<float> o(in.size());
            poison_output_order(in.data(), o.data(), N, R);
            for (unsigned i = R; i < N - R; ++i)
                for (unsigned j = R; j < N - R; ++j)
                    for (unsigned k = R + 1; k < N - R - 1; ++k) {
                        double v = w[0] * in[grid_index(N, i, j, k)];
                        for (unsigned d = 1; d <= R; ++d) {
                            v += w[size_t(star_weight(int(d), kMinusK))] * in[grid_index(N, i, j, k - d - 1)] +
                                 w[size_t(star_weight(int(d), kPlusK))] * in[grid_index(N, i, j, k + d + 1)] +
                                 w[size_t(star_weight(int(d), kMinusJ))] * in[grid_index(N, i, j - d, k)] +
                                 w[size_t(star_weight(int(d), kPlusJ))] * in[grid_index(N, i, j + d, k)] +
                                 w[size_t(star_weight(int(d), kMinusI))] * in[grid_index(N, i - d, j, k)] +
                                 w[size_t(star_weight(int(d), kPlusI))] * in[grid_index(N, i + d, j, k)];
                        }
                        o[grid_index(N, i, j, k)] = float(v);
                    }
            r = check_output_order(in.data(), o.data(), N, R, c, none);
            CHECK(!r.ok() && contains(r.hint, "along k") && contains(r.hint, "further out"));
        }
        // Wrong values only within R of an output tile's face: the halo.
        TileShape tiles;
        tiles.size[2] = 6;
        out = sweep(in, N, R, w.data());
        for (unsigned i = R; i < N - R; ++i)
            for (unsigned j = R; j < N - R; ++j) out[grid_index(N, i, j, 6)] += 0.5f;
        r = check_output_order(in.data(), out.data(), N, R, c, tiles);
        CHECK(R >= 3 || contains(r.hint, "faces of output tiles"));
    }
    return test_exit_code();
}
