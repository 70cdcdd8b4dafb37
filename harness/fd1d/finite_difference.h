#pragma once
// Stage 01's CPU side: central-difference stencils on a 1D grid (PMPP Section 8.1), the CPU
// reference and checker for the GPU kernel, and the convergence study (error against h).
// Everything here is plain C++: the unit test links it without CUDA.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// The book's "order" of a 1D stencil is the number of grid points on each side of the centre.
constexpr int kMinOrder = 1, kMaxOrder = 3;
constexpr int kMaxStencilPoints = 2 * kMaxOrder + 1;

// A central-difference stencil for the first or second derivative:
//   f^(d)(x) ≈ Σ_{j=-order..order} numerator[j + order] · f(x + j·h) / (denominator · h^d),
// with an error proportional to h^(2·order) for both derivatives.
struct StencilWeights {
    int derivative;  // 1 or 2
    int order;       // points on each side: 1, 2, 3
    int denominator;
    int numerator[kMaxStencilPoints];  // numerator[j + order] multiplies f(x + j·h); 2·order + 1 used
    int points() const { return 2 * order + 1; }
    int accuracy() const { return 2 * order; }  // the error is O(h^accuracy)
};

bool valid_stencil(int derivative, int order);
// The weights of one stencil; derivative in {1, 2}, order in {1, 2, 3} (else std::invalid_argument).
const StencilWeights& stencil_weights(int derivative, int order);
// w[j + order] = numerator[j + order] / (denominator · h^derivative), for j = -order..order.
std::vector<double> scaled_weights(int derivative, int order, double h);
// The same weights rounded to float, as the GPU kernel uses them; writes 2·order + 1 values.
// Returns false (and writes nothing) for a derivative or order that has no stencil.
bool float_weights(int derivative, int order, float h, float* w);

// ---------------------------------------------------------------- CPU reference (float64)

// out[i] = Σ_j w[j + order] · f[i + j] in double, for order <= i < n - order: the points where the
// stencil fits. The first and last `order` points of `out` are not written.
void reference_derivative(const float* f, double* out, unsigned n, double h, int derivative, int order);
void reference_derivative(const double* f, double* out, unsigned n, double h, int derivative, int order);

// ---------------------------------------------------------------- checking the GPU's output

// The kernel's output starts poisoned with this NaN (a payload no arithmetic produces), so an
// interior point never written, or a boundary point written, shows in the bits.
constexpr uint32_t kPoisonBits = 0x7FC0DEADu;
float poison_value();
bool is_poison(float v);

// A point fails when |got - expected| > kTolerance1D · Σ_j |w_j · f[i+j]|. Scaling by the sum of the
// terms' magnitudes (not by |expected|, which is near zero where the derivative vanishes) bounds
// float's rounding: 2·order + 1 weights rounded to float, as many products and additions, each
// within 2^-24 of that sum: at most 15 × 6e-8 ≈ 1e-6 of it. 1e-5 leaves a margin of 10, while a
// wrong weight or neighbour moves the result by about |w_j|·|f_a - f_b|, some 1e-2 of the sum
// with random inputs in [0.5, 1.5).
constexpr double kTolerance1D = 1e-5;
constexpr size_t kMaxReportedPoints = 5;

struct WrongPoint {
    unsigned i;
    double expected;
    float got;
};

struct DerivativeCheck {
    int derivative = 1, order = 1;
    unsigned n = 0;
    size_t interior = 0;           // points where the stencil fits: order <= i < n - order
    size_t wrong = 0;              // interior points off by more than the tolerance (NaN included)
    size_t unwritten = 0;          // interior points still holding the poison
    size_t boundary_modified = 0;  // boundary points (the first and last `order`) no longer poison
    double worst = 0;              // max over interior points of |got - expected| / tolerance (1 = at it)
    bool input_modified = false;   // set by the GPU runner when `f` changed
    bool guard_violated = false;   // set by the GPU runner when a write landed outside `out`
    std::vector<WrongPoint> first_wrong;
    std::vector<unsigned> first_boundary_written;
    std::string hint;
    bool ok() const { return wrong == 0 && boundary_modified == 0 && !input_modified && !guard_violated; }
};

// Checks `out` (the kernel's result for f on a grid of spacing h) against the CPU reference.
DerivativeCheck check_derivative(const float* f, const float* out, unsigned n, float h, int derivative, int order);
// A few lines: which stencil, what failed, the first wrong points (index, expected, got), the hint.
std::string describe_failure(const DerivativeCheck& r);

// ---------------------------------------------------------------- the convergence study

enum class Precision { Double, Float };
const char* precision_name(Precision p);
const char* derivative_name(int derivative);  // "first", "second"

// The study evaluates each stencil at the fixed points x = k·π/6, k = 1..5 (the interior points of
// the book's grid, which are grid points for every h = π/6 / 2^m), and takes the largest
// |estimate - exact| (exact: cos x, or -sin x for the second derivative).
constexpr int kStudyPoints = 5;
constexpr int kHalvings = 20;  // h = π/6 / 2^m for m = 0..19: from 0.52 down to 1.0e-6
double study_h(int m);
double exact_derivative(int derivative, double x);

// In double, everything is double. In float, the samples are stored as floats (float(sin(x + j·h)),
// x + j·h computed in double), the weights are rounded to float and the sum is taken in float:
// what a float array and the GPU kernel give.
double max_error(int derivative, int order, Precision p, double h);

// Rounding the samples costs about u·Σ|w_j| (u = 2^-53 or 2^-24, |sin| <= 1): the round-off floor,
// which grows like u/h for the first derivative and u/h² for the second.
double roundoff_estimate(int derivative, int order, Precision p, double h);

// Least-squares slope of y against x (NaN with fewer than two points).
double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y);

struct ConvergenceRow {
    int derivative, order;
    Precision precision;
    double h, error;
};

// The measured order of accuracy of one stencil in one precision: the least-squares slope of
// log(error) against log(h) over the leading run of h (from π/6 down) whose error is at least
// kTruncationMargin times the round-off estimate, i.e. where truncation dominates. NaN (null in
// JSON) when fewer than kMinFitPoints qualify: float reaches its floor that fast for the 5- and
// 7-point stencils.
constexpr double kTruncationMargin = 100;
constexpr int kMinFitPoints = 3;
struct MeasuredOrder {
    int derivative, order;
    Precision precision;
    double slope;             // NaN when fewer than kMinFitPoints points qualify
    int fitted;               // how many h values the fit used
    double fit_h_max, fit_h_min;
    double best_error, best_h;  // the smallest error over all h, and where
};

// The book's example (Fig. 8.1): sin on [0, π] at 7 points, h = π/6, and the 3-point central
// difference (F[i+1] - F[i-1]) / 2h at the interior points i = 1..5: estimate[k] and exact[k]
// belong to x[k + 1].
struct BookExample {
    double h;
    std::vector<double> x, F;          // 7 values
    std::vector<double> estimate, exact;  // 5 values, at i = 1..5
    double interp_x, interp, interp_exact;  // linear interpolation halfway between F[1] and F[2]
};
BookExample book_example();

struct ConvergenceStudy {
    std::vector<ConvergenceRow> rows;  // derivative × order × precision × h
    std::vector<MeasuredOrder> orders;
    BookExample book;
};
ConvergenceStudy convergence_study();
const MeasuredOrder& find_order(const ConvergenceStudy& s, int derivative, int order, Precision p);

std::string book_example_text(const BookExample& b);
std::string error_table_text(const ConvergenceStudy& s, int derivative);
std::string measured_orders_text(const ConvergenceStudy& s);
// One JSON object on one line (no trailing newline): kind "convergence", for the plots.
std::string study_json(const ConvergenceStudy& s, const std::string& device);
