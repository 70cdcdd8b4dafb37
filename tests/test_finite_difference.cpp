// Stage 01's CPU side: the stencil weights, the CPU reference and checker, the convergence study.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "check.h"
#include "fd1d/finite_difference.h"

namespace {

constexpr double kPi = 3.14159265358979323846;

// Σ_j numerator[j + order] · j^p / denominator: the stencil applied to x^p at x = 0 with h = 1.
double moment(const StencilWeights& s, int p) {
    double sum = 0;
    for (int j = -s.order; j <= s.order; ++j) sum += s.numerator[j + s.order] * std::pow(double(j), p);
    return sum / s.denominator;
}

double factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }

// Taylor: Σ_j w_j f(x + j·h) = Σ_p f^(p)(x) h^p / p! · moment(p) / h^d. The stencil approximates
// f^(d) when moment(d) = d! and moment(p) = 0 for every other p below some q; the error is then
// O(h^(q - d)).
void test_moment_conditions() {
    for (int d = 1; d <= 2; ++d)
        for (int o = kMinOrder; o <= kMaxOrder; ++o) {
            const StencilWeights& s = stencil_weights(d, o);
            CHECK(s.derivative == d && s.order == o && s.points() == 2 * o + 1);
            CHECK(std::fabs(moment(s, d) - factorial(d)) < 1e-12);
            int q = -1;
            for (int p = 0; p <= 2 * o + 4 && q < 0; ++p)
                if (p != d && std::fabs(moment(s, p)) > 1e-9) q = p;
            std::printf("%s derivative, %d points: the first nonzero moment past the derivative is p = %d, so the "
                        "error is O(h^%d)\n", derivative_name(d), s.points(), q, q - d);
            CHECK(q == d + 2 * o);  // O(h^2), O(h^4), O(h^6)
            CHECK(q - d == s.accuracy());
            // Symmetry: antisymmetric weights for the first derivative, symmetric for the second.
            for (int j = 1; j <= o; ++j)
                CHECK(s.numerator[o + j] == (d == 1 ? -1 : 1) * s.numerator[o - j]);
        }
    CHECK(!valid_stencil(3, 1) && !valid_stencil(1, 0) && !valid_stencil(1, 4));
    float w[kMaxStencilPoints];
    CHECK(!float_weights(1, 4, 0.5f, w));
    CHECK(float_weights(1, 1, 0.5f, w) && w[0] == -1.0f && w[1] == 0.0f && w[2] == 1.0f);  // ±1/(2h)
}

// The stencil of 2·order + 1 points differentiates polynomials up to degree 2·order exactly.
void test_reference_on_polynomials() {
    const unsigned n = 40;
    const double h = 0.125;
    for (int d = 1; d <= 2; ++d)
        for (int o = kMinOrder; o <= kMaxOrder; ++o) {
            int degree = 2 * o + (d == 2 ? 1 : 0);  // symmetric weights also kill the next odd power
            std::vector<double> f(n), out(n, -777.0);
            auto coeff = [](int q) { return 1.0 + 0.5 * q; };
            for (unsigned i = 0; i < n; ++i) {
                double x = i * h, v = 0;
                for (int q = 0; q <= degree; ++q) v += coeff(q) * std::pow(x, q);
                f[i] = v;
            }
            reference_derivative(f.data(), out.data(), n, h, d, o);
            for (unsigned i = 0; i < n; ++i) {
                if (i < unsigned(o) || i + o >= n) {
                    CHECK(out[i] == -777.0);  // the boundary points are not written
                    continue;
                }
                double x = i * h, exact = 0, scale = 0;
                for (int q = d; q <= degree; ++q) exact += coeff(q) * factorial(q) / factorial(q - d) * std::pow(x, q - d);
                for (double w : scaled_weights(d, o, h)) scale += std::fabs(w);
                scale *= std::fabs(f[n - 1]);
                CHECK(std::fabs(out[i] - exact) <= 1e-13 * scale);
            }
        }
    // The float overload, on samples a float holds exactly: f = 1 + x/2 + 3x²/16 at x = i/4.
    std::vector<float> f(16);
    std::vector<double> out(16, -1.0);
    for (unsigned i = 0; i < 16; ++i) {
        double x = i * 0.25;
        f[i] = float(1 + x / 2 + 3 * x * x / 16);
    }
    reference_derivative(f.data(), out.data(), 16, 0.25, 1, 2);
    for (unsigned i = 2; i < 14; ++i) CHECK(std::fabs(out[i] - (0.5 + 0.375 * i * 0.25)) < 1e-12);
    CHECK(out[0] == -1.0 && out[1] == -1.0 && out[14] == -1.0 && out[15] == -1.0);
}

void test_book_example() {
    BookExample b = book_example();
    CHECK(b.x.size() == 7 && b.F.size() == 7 && b.estimate.size() == 5 && b.exact.size() == 5);
    CHECK(std::fabs(b.h - 0.5236) < 1e-4);
    CHECK(std::fabs(b.F[2] - 0.866) < 1e-3);  // the book's F[2] ≈ 0.87 = sin(2π/6)
    CHECK(std::fabs(b.F[1] - 0.5) < 1e-15 && std::fabs(b.F[3] - 1.0) < 1e-15 && std::fabs(b.F[6]) < 1e-15);
    // At x = π/6: (F[2] - F[0]) / 2h = 0.8270 against cos(π/6) = 0.8660, an error of -0.039,
    // close to the leading term -h²/6 · cos(π/6) = -0.0396.
    CHECK(std::fabs(b.estimate[0] - 0.8270) < 1e-4);
    CHECK(std::fabs(b.exact[0] - 0.8660) < 1e-4);
    double err = b.estimate[0] - b.exact[0];
    CHECK(err < -0.038 && err > -0.040);
    CHECK(std::fabs(err / (-b.h * b.h / 6 * std::cos(kPi / 6)) - 1) < 0.03);
    CHECK(std::fabs(b.estimate[2]) < 1e-15);  // at π/2 the symmetric samples cancel exactly
    CHECK(std::fabs(b.interp - 0.6830) < 1e-4 && std::fabs(b.interp_exact - 0.7071) < 1e-4);
    std::string text = book_example_text(b);
    CHECK(text.find("0.8660") != std::string::npos && text.find("0.8270") != std::string::npos);
}

void test_slope() {
    std::vector<double> x = {0, 1, 2, 3}, y = {1, 3.5, 6, 8.5};
    CHECK(std::fabs(least_squares_slope(x, y) - 2.5) < 1e-12);
    CHECK(std::isnan(least_squares_slope({1}, {2})));
    CHECK(std::isnan(least_squares_slope({1, 1}, {2, 3})));
}

void test_convergence() {
    ConvergenceStudy s = convergence_study();
    CHECK(s.rows.size() == size_t(2 * 3 * 2 * kHalvings));
    CHECK(std::fabs(study_h(0) - kPi / 6) < 1e-15 && study_h(kHalvings - 1) < 1.1e-6);
    const double tolerance = 0.2;
    for (int d = 1; d <= 2; ++d)
        for (int o = kMinOrder; o <= kMaxOrder; ++o) {
            const MeasuredOrder& dbl = find_order(s, d, o, Precision::Double);
            const MeasuredOrder& flt = find_order(s, d, o, Precision::Float);
            std::printf("%s derivative, %d points: measured order %.3f in double over %d values of h (%.1e .. "
                        "%.1e); smallest error %.2e in double, %.2e in float\n",
                        derivative_name(d), 2 * o + 1, dbl.slope, dbl.fitted, dbl.fit_h_max, dbl.fit_h_min,
                        dbl.best_error, flt.best_error);
            // Orders 2, 4, 6 in double, over at least 4 halvings before round-off takes over.
            CHECK(std::fabs(dbl.slope - 2 * o) <= tolerance);
            CHECK(dbl.fitted >= 4);
            // Float's round-off floor: its best error is far above double's.
            CHECK(flt.best_error > 1e3 * dbl.best_error);
            CHECK(flt.best_error > 1e-8);
            // Where float's slope is measured at all, it agrees; it is never measured over more h.
            CHECK(std::isnan(flt.slope) || std::fabs(flt.slope - 2 * o) <= tolerance);
            CHECK(flt.fitted <= dbl.fitted);
        }
    // The 3-point stencils are measured in float too, before the floor.
    CHECK(!std::isnan(find_order(s, 1, 1, Precision::Float).slope));
    // Past the floor the float error grows again as h shrinks: ~u/h (first), ~u/h² (second).
    for (int d = 1; d <= 2; ++d) {
        double smallest_h_error = max_error(d, 1, Precision::Float, study_h(kHalvings - 1));
        CHECK(smallest_h_error > 100 * find_order(s, d, 1, Precision::Float).best_error);
    }
    // The JSON record for the plots.
    std::string json = study_json(s, "CPU");
    CHECK(json.find("{\"stage\": \"01_discretization\", \"kind\": \"convergence\", \"device\": \"CPU\"") == 0);
    CHECK(json.find("\"measured_order\": [") != std::string::npos);
    CHECK(json.find("\"book_example\": {") != std::string::npos);
    CHECK(json.find("{\"derivative\": \"second\", \"points\": 7, \"order\": 3, \"precision\": \"float\", \"h\": ") !=
          std::string::npos);
    CHECK(json.find("nan") == std::string::npos && json.find("inf") == std::string::npos);
    CHECK(json.find('\n') == std::string::npos);
}

void test_checker() {
    const unsigned n = 50;
    const float h = 0.02f;
    std::vector<float> f(n);
    for (unsigned i = 0; i < n; ++i) f[i] = float(0.5 + 0.37 * std::fmod(i * 0.618, 1.0));
    for (int d = 1; d <= 2; ++d)
        for (int o = kMinOrder; o <= kMaxOrder; ++o) {
            // A correct float result (float weights, float sum, as the GPU) passes.
            std::vector<float> out(n, poison_value());
            float w[kMaxStencilPoints];
            CHECK(float_weights(d, o, h, w));
            for (unsigned i = unsigned(o); i + o < n; ++i) {
                float sum = 0;
                for (int j = -o; j <= o; ++j) sum += w[j + o] * f[i + j];
                out[i] = sum;
            }
            DerivativeCheck good = check_derivative(f.data(), out.data(), n, h, d, o);
            CHECK(good.ok() && good.interior == n - 2 * o && good.worst < 0.2);

            // A boundary point written.
            std::vector<float> bad = out;
            bad[0] = 1.0f;
            DerivativeCheck b = check_derivative(f.data(), bad.data(), n, h, d, o);
            CHECK(!b.ok() && b.boundary_modified == 1 && b.hint.find("boundary") != std::string::npos);

            // Too few blocks: the tail never written.
            bad = out;
            for (unsigned i = 32; i < n; ++i) bad[i] = poison_value();
            b = check_derivative(f.data(), bad.data(), n, h, d, o);
            CHECK(!b.ok() && b.unwritten == n - o - 32 && b.hint.find("too few blocks") != std::string::npos);
            CHECK(describe_failure(b).find("i = 32: expected") != std::string::npos);
            CHECK(describe_failure(b).find("never written") != std::string::npos);

            // Nothing written.
            std::vector<float> none(n, poison_value());
            b = check_derivative(f.data(), none.data(), n, h, d, o);
            CHECK(!b.ok() && b.unwritten == b.interior && b.hint.find("no interior point") != std::string::npos);

            // Mirrored weights: the sign flips for the first derivative.
            bad = out;
            for (unsigned i = unsigned(o); i + o < n; ++i) {
                float sum = 0;
                for (int j = -o; j <= o; ++j) sum += w[j + o] * f[i - j];
                bad[i] = sum;
            }
            b = check_derivative(f.data(), bad.data(), n, h, d, o);
            if (d == 1) CHECK(!b.ok() && b.hint.find("sign flipped") != std::string::npos);
            else CHECK(b.ok());  // symmetric weights: the same stencil

            // Off by one: the centre at i + 1.
            bad = out;
            for (unsigned i = unsigned(o); i + o + 1 < n; ++i) bad[i] = out[i + 1];
            b = check_derivative(f.data(), bad.data(), n, h, d, o);
            CHECK(!b.ok());
        }
    CHECK(is_poison(poison_value()) && !is_poison(std::nanf("")));
    // N = 3: the 5- and 7-point stencils have no interior point, so only the poison is checked.
    std::vector<float> f3 = {1, 2, 3}, out3(3, poison_value());
    DerivativeCheck r = check_derivative(f3.data(), out3.data(), 3, 0.5f, 1, 3);
    CHECK(r.ok() && r.interior == 0);
    out3[1] = 2.0f;  // right for 3 points, but the 7-point stencil does not fit at i = 1
    CHECK(!check_derivative(f3.data(), out3.data(), 3, 0.5f, 1, 3).ok());
    CHECK(check_derivative(f3.data(), out3.data(), 3, 0.5f, 1, 1).ok());
}

}  // namespace

int main() {
    test_moment_conditions();
    test_reference_on_polynomials();
    test_book_example();
    test_slope();
    test_convergence();
    test_checker();
    return test_exit_code();
}
