#include "fd1d/finite_difference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Central differences; check them with the moment conditions in tests/test_finite_difference.cpp.
const StencilWeights kStencils[2][kMaxOrder] = {
    {{1, 1, 2, {-1, 0, 1}},
     {1, 2, 12, {1, -8, 0, 8, -1}},
     {1, 3, 60, {-1, 9, -45, 0, 45, -9, 1}}},
    {{2, 1, 1, {1, -2, 1}},
     {2, 2, 12, {-1, 16, -30, 16, -1}},
     {2, 3, 180, {2, -27, 270, -490, 270, -27, 2}}},
};

template <class T>
void reference(const T* f, double* out, unsigned n, double h, int derivative, int order) {
    std::vector<double> w = scaled_weights(derivative, order, h);
    for (unsigned i = unsigned(order); i + unsigned(order) < n; ++i) {
        double sum = 0;
        for (int j = -order; j <= order; ++j) sum += w[size_t(j + order)] * double(f[i + j]);
        out[i] = sum;
    }
}

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// JSON numbers: no NaN or infinity there, so those become null.
std::string json_number(double v) { return std::isfinite(v) ? fmt("%.9g", v) : "null"; }

std::string stencil_name(int derivative, int order) {
    return std::string(derivative_name(derivative)) + " derivative, " + std::to_string(2 * order + 1) +
           "-point stencil (order " + std::to_string(order) + ")";
}

}  // namespace

bool valid_stencil(int derivative, int order) {
    return (derivative == 1 || derivative == 2) && order >= kMinOrder && order <= kMaxOrder;
}

const StencilWeights& stencil_weights(int derivative, int order) {
    if (!valid_stencil(derivative, order))
        throw std::invalid_argument("no stencil for derivative " + std::to_string(derivative) + ", order " +
                                    std::to_string(order));
    return kStencils[derivative - 1][order - 1];
}

std::vector<double> scaled_weights(int derivative, int order, double h) {
    const StencilWeights& s = stencil_weights(derivative, order);
    double scale = s.denominator * std::pow(h, derivative);
    std::vector<double> w(size_t(s.points()));
    for (int p = 0; p < s.points(); ++p) w[size_t(p)] = s.numerator[p] / scale;
    return w;
}

bool float_weights(int derivative, int order, float h, float* w) {
    if (!valid_stencil(derivative, order)) return false;
    std::vector<double> exact = scaled_weights(derivative, order, double(h));
    for (size_t p = 0; p < exact.size(); ++p) w[p] = float(exact[p]);
    return true;
}

void reference_derivative(const float* f, double* out, unsigned n, double h, int derivative, int order) {
    reference(f, out, n, h, derivative, order);
}

void reference_derivative(const double* f, double* out, unsigned n, double h, int derivative, int order) {
    reference(f, out, n, h, derivative, order);
}

// ---------------------------------------------------------------- checking

float poison_value() {
    float v;
    std::memcpy(&v, &kPoisonBits, sizeof v);
    return v;
}

bool is_poison(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == kPoisonBits;
}

DerivativeCheck check_derivative(const float* f, const float* out, unsigned n, float h, int derivative, int order) {
    DerivativeCheck r;
    r.derivative = derivative;
    r.order = order;
    r.n = n;
    std::vector<double> w = scaled_weights(derivative, order, double(h));
    const unsigned o = unsigned(order);
    auto expected_at = [&](unsigned i, double& scale) {
        double sum = 0;
        scale = 0;
        for (int j = -order; j <= order; ++j) {
            double term = w[size_t(j + order)] * double(f[i + j]);
            sum += term;
            scale += std::fabs(term);
        }
        return sum;
    };
    auto matches = [&](double expected, double scale, double got) {
        return std::fabs(got - expected) <= kTolerance1D * scale;
    };

    // The patterns behind the hints: every wrong value explained by one mistake.
    size_t negated = 0, shifted_left = 0, shifted_right = 0, numeric_wrong = 0;
    unsigned first_unwritten = n, last_written = 0;
    bool any_written = false;
    for (unsigned i = 0; i < n; ++i) {
        if (i < o || i + o >= n) {
            if (!is_poison(out[i])) {
                ++r.boundary_modified;
                if (r.first_boundary_written.size() < kMaxReportedPoints) r.first_boundary_written.push_back(i);
            }
            continue;
        }
        ++r.interior;
        double scale;
        double expected = expected_at(i, scale);
        float got = out[i];
        double err = std::isnan(got) ? std::numeric_limits<double>::infinity() : std::fabs(got - expected);
        r.worst = std::max(r.worst, err / (kTolerance1D * scale));
        if (!is_poison(got)) {
            any_written = true;
            last_written = i;
        }
        if (err <= kTolerance1D * scale) continue;
        ++r.wrong;
        if (r.first_wrong.size() < kMaxReportedPoints) r.first_wrong.push_back({i, expected, got});
        if (is_poison(got)) {
            ++r.unwritten;
            first_unwritten = std::min(first_unwritten, i);
            continue;
        }
        ++numeric_wrong;
        if (matches(-expected, scale, got)) ++negated;
        // Does the value belong to a neighbouring point? (Computed first: argument order is unspecified.)
        double neighbour_scale = 0, neighbour;
        if (i > o) {
            neighbour = expected_at(i - 1, neighbour_scale);
            if (matches(neighbour, neighbour_scale, got)) ++shifted_left;
        }
        if (i + o + 1 < n) {
            neighbour = expected_at(i + 1, neighbour_scale);
            if (matches(neighbour, neighbour_scale, got)) ++shifted_right;
        }
    }

    if (r.boundary_modified > 0)
        r.hint = "the kernel wrote a boundary point (the first and last " + std::to_string(order) +
                 ", where the stencil does not fit): only threads with " + std::to_string(order) +
                 " <= i < n - " + std::to_string(order) + " may write";
    else if (r.unwritten == r.interior && r.interior > 0)
        r.hint = "no interior point was written (all still hold the NaN poison): check the launch (at least one "
                 "thread per point) and that the guard lets the interior threads through";
    else if (r.unwritten > 0 && r.unwritten == r.wrong && (!any_written || last_written < first_unwritten))
        r.hint = "the points from i = " + std::to_string(first_unwritten) +
                 " on were never written: the grid has too few blocks; round up, ceil_div(n, BLOCK_SIZE) "
                 "blocks of BLOCK_SIZE threads";
    else if (r.unwritten == r.wrong && r.unwritten > 0)
        r.hint = "these points were never written (they still hold the NaN poison): check the guard";
    else if (numeric_wrong > 0 && negated == numeric_wrong && derivative == 1)
        r.hint = "every wrong value is the expected one with its sign flipped: weights[j + order] multiplies "
                 "f[i + j], the point j steps to the right (j > 0), not f[i - j]";
    else if (numeric_wrong > 0 && (shifted_left == numeric_wrong || shifted_right == numeric_wrong))
        r.hint = std::string("every wrong value is the expected value of the point at i ") +
                 (shifted_left == numeric_wrong ? "- 1" : "+ 1") +
                 ": the offset is off by one; the stencil around i reads f[i - order] .. f[i + order]";
    else if (r.wrong > 0 && r.wrong == r.interior)
        r.hint = "every interior point is off: check the loop (j from -order to +order, 2·order + 1 terms) and "
                 "that weights[j + order] multiplies f[i + j]";
    return r;
}

std::string describe_failure(const DerivativeCheck& r) {
    std::ostringstream s;
    s << "  FAIL " << stencil_name(r.derivative, r.order) << ", N = " << r.n << ": " << r.wrong << " of "
      << r.interior << " interior points wrong";
    if (r.unwritten) s << " (" << r.unwritten << " never written)";
    s << ", " << r.boundary_modified << " boundary points written\n";
    if (r.input_modified) s << "    the input array f was modified: the kernel must only read it\n";
    if (r.guard_violated) s << "    a write landed outside out[0 .. N-1]: the guard must stop threads past the end\n";
    if (!r.first_boundary_written.empty()) {
        s << "    boundary points written (they must keep the poison):";
        for (unsigned i : r.first_boundary_written) s << " i = " << i;
        s << "\n";
    }
    for (const WrongPoint& p : r.first_wrong) {
        char line[160];
        std::snprintf(line, sizeof line, "    i = %u: expected %.7g, got %s\n", p.i, p.expected,
                      is_poison(p.got) ? "NaN (never written)" : fmt("%.7g", double(p.got)).c_str());
        s << line;
    }
    if (!r.hint.empty()) s << "    hint: " << r.hint << "\n";
    return s.str();
}

// ---------------------------------------------------------------- the convergence study

const char* precision_name(Precision p) { return p == Precision::Double ? "double" : "float"; }
const char* derivative_name(int derivative) { return derivative == 1 ? "first" : "second"; }

double study_h(int m) { return kPi / 6 / std::ldexp(1.0, m); }

double exact_derivative(int derivative, double x) { return derivative == 1 ? std::cos(x) : -std::sin(x); }

double max_error(int derivative, int order, Precision p, double h) {
    std::vector<double> w = scaled_weights(derivative, order, h);
    double worst = 0;
    for (int k = 1; k <= kStudyPoints; ++k) {
        double x = k * (kPi / 6), estimate;
        if (p == Precision::Double) {
            double sum = 0;
            for (int j = -order; j <= order; ++j) sum += w[size_t(j + order)] * std::sin(x + j * h);
            estimate = sum;
        } else {
            float sum = 0;
            for (int j = -order; j <= order; ++j) sum += float(w[size_t(j + order)]) * float(std::sin(x + j * h));
            estimate = sum;
        }
        worst = std::max(worst, std::fabs(estimate - exact_derivative(derivative, x)));
    }
    return worst;
}

double roundoff_estimate(int derivative, int order, Precision p, double h) {
    double u = p == Precision::Double ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    double sum = 0;
    for (double w : scaled_weights(derivative, order, h)) sum += std::fabs(w);
    return u * sum;
}

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
    size_t n = std::min(x.size(), y.size());
    if (n < 2) return kNaN;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
    mx /= double(n);
    my /= double(n);
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < n; ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    return sxx > 0 ? sxy / sxx : kNaN;
}

BookExample book_example() {
    BookExample b;
    b.h = kPi / 6;
    for (int i = 0; i < 7; ++i) {
        b.x.push_back(i * b.h);
        b.F.push_back(std::sin(i * b.h));
    }
    for (int i = 1; i <= 5; ++i) {
        b.estimate.push_back((b.F[size_t(i + 1)] - b.F[size_t(i - 1)]) / (2 * b.h));
        b.exact.push_back(std::cos(b.x[size_t(i)]));
    }
    b.interp_x = 1.5 * b.h;  // π/4
    b.interp = 0.5 * (b.F[1] + b.F[2]);
    b.interp_exact = std::sin(b.interp_x);
    return b;
}

ConvergenceStudy convergence_study() {
    ConvergenceStudy s;
    s.book = book_example();
    for (int d = 1; d <= 2; ++d)
        for (int o = kMinOrder; o <= kMaxOrder; ++o)
            for (Precision p : {Precision::Double, Precision::Float}) {
                MeasuredOrder m{d, o, p, kNaN, 0, kNaN, kNaN, std::numeric_limits<double>::infinity(), kNaN};
                std::vector<double> log_h, log_e;
                bool in_run = true;
                for (int k = 0; k < kHalvings; ++k) {
                    double h = study_h(k), e = max_error(d, o, p, h);
                    s.rows.push_back({d, o, p, h, e});
                    if (e < m.best_error) m.best_error = e, m.best_h = h;
                    in_run = in_run && e > 0 && e >= kTruncationMargin * roundoff_estimate(d, o, p, h);
                    if (in_run) {
                        log_h.push_back(std::log(h));
                        log_e.push_back(std::log(e));
                        if (m.fitted++ == 0) m.fit_h_max = h;
                        m.fit_h_min = h;
                    }
                }
                if (m.fitted >= kMinFitPoints) m.slope = least_squares_slope(log_h, log_e);
                s.orders.push_back(m);
            }
    return s;
}

const MeasuredOrder& find_order(const ConvergenceStudy& s, int derivative, int order, Precision p) {
    for (const MeasuredOrder& m : s.orders)
        if (m.derivative == derivative && m.order == order && m.precision == p) return m;
    throw std::invalid_argument("no such stencil in the study");
}

std::string book_example_text(const BookExample& b) {
    std::ostringstream s;
    char line[200];
    std::snprintf(line, sizeof line,
                  "The book's example (Fig. 8.1): sin(x) on [0, pi] stored at 7 grid points, h = pi/6 = %.4f\n", b.h);
    s << line << "   i   x = i*h   F[i] = sin(x)   (F[i+1] - F[i-1]) / 2h   cos(x)    error\n";
    for (size_t i = 0; i < b.x.size(); ++i) {
        std::snprintf(line, sizeof line, "  %2zu   %.4f    %7.4f", i, b.x[i], b.F[i] + 0.0);
        s << line;
        if (i >= 1 && i <= 5) {
            double est = b.estimate[i - 1], ex = b.exact[i - 1];
            std::snprintf(line, sizeof line, "         %8.4f                 %7.4f   %+.2e", est + 0.0, ex + 0.0,
                          est - ex);
            s << line;
        } else {
            s << "         (the 3-point stencil does not fit: no neighbour on one side)";
        }
        s << "\n";
    }
    std::snprintf(line, sizeof line,
                  "Between grid points: linear interpolation at x = pi/4 gives (F[1] + F[2]) / 2 = %.4f; "
                  "sin(pi/4) = %.4f (error %+.2e, about h^2/8 * |f''|)\n",
                  b.interp, b.interp_exact, b.interp - b.interp_exact);
    s << line;
    return s.str();
}

std::string error_table_text(const ConvergenceStudy& s, int derivative) {
    std::ostringstream out;
    out << "max |error| of the " << derivative_name(derivative) << " derivative ("
        << (derivative == 1 ? "exact: cos x" : "exact: -sin x") << ") at x = k*pi/6, k = 1..5\n"
        << "   h          double 3-pt  5-pt      7-pt      float 3-pt   5-pt      7-pt\n";
    for (int k = 0; k < kHalvings; ++k) {
        out << fmt("   %.3e", study_h(k));
        for (Precision p : {Precision::Double, Precision::Float})
            for (int o = kMinOrder; o <= kMaxOrder; ++o) {
                for (const ConvergenceRow& r : s.rows)
                    if (r.derivative == derivative && r.order == o && r.precision == p && r.h == study_h(k))
                        out << fmt(o == kMinOrder ? "    %.2e" : "  %.2e", r.error);
            }
        out << "\n";
    }
    return out.str();
}

std::string measured_orders_text(const ConvergenceStudy& s) {
    std::ostringstream out;
    out << "Measured order of accuracy: slope of log(error) vs log(h), fitted where the error is at least "
        << kTruncationMargin << "x the round-off\n"
        << "derivative  stencil  precision  expected  measured  fitted h range (points)   smallest error  at h\n";
    char line[200];
    for (const MeasuredOrder& m : s.orders) {
        std::string measured = std::isnan(m.slope) ? "   -    " : fmt("%6.2f  ", m.slope);
        std::string range = m.fitted == 0 ? "none" : fmt("%.1e", m.fit_h_max) + " .. " + fmt("%.1e", m.fit_h_min);
        range += " (" + std::to_string(m.fitted) + ")";
        std::snprintf(line, sizeof line, "%-10s  %d-point  %-9s  %5d     %s  %-25s %.2e        %.1e\n",
                      derivative_name(m.derivative), 2 * m.order + 1, precision_name(m.precision), 2 * m.order,
                      measured.c_str(), range.c_str(), m.best_error, m.best_h);
        out << line;
    }
    out << "(- : float reaches its round-off floor before " << kMinFitPoints
        << " values of h qualify. Past the smallest error, round-off grows like u/h, or u/h^2 for the second "
           "derivative.)\n";
    return out.str();
}

std::string study_json(const ConvergenceStudy& s, const std::string& device) {
    std::ostringstream j;
    std::string dev;
    for (char c : device) {
        if (c == '"' || c == '\\') dev += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) dev += c;
    }
    j << "{\"stage\": \"01_discretization\", \"kind\": \"convergence\", \"device\": \"" << dev << "\", \"rows\": [";
    for (size_t i = 0; i < s.rows.size(); ++i) {
        const ConvergenceRow& r = s.rows[i];
        j << (i ? ", " : "") << "{\"derivative\": \"" << derivative_name(r.derivative) << "\", \"points\": "
          << 2 * r.order + 1 << ", \"order\": " << r.order << ", \"precision\": \"" << precision_name(r.precision)
          << "\", \"h\": " << json_number(r.h) << ", \"error\": " << json_number(r.error) << "}";
    }
    j << "], \"measured_order\": [";
    for (size_t i = 0; i < s.orders.size(); ++i) {
        const MeasuredOrder& m = s.orders[i];
        j << (i ? ", " : "") << "{\"derivative\": \"" << derivative_name(m.derivative) << "\", \"points\": "
          << 2 * m.order + 1 << ", \"precision\": \"" << precision_name(m.precision)
          << "\", \"slope\": " << json_number(m.slope) << "}";
    }
    auto array = [&](const std::vector<double>& v) {
        std::string a = "[";
        for (size_t i = 0; i < v.size(); ++i) a += (i ? ", " : "") + json_number(v[i]);
        return a + "]";
    };
    const BookExample& b = s.book;
    j << "], \"book_example\": {\"function\": \"sin(x)\", \"h\": " << json_number(b.h) << ", \"x\": " << array(b.x) << ", \"F\": " << array(b.F)
      << ", \"estimate\": " << array(b.estimate) << ", \"exact\": " << array(b.exact) << "}}";
    return j.str();
}
