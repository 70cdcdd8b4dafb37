#include "heat/heat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "common/grid.h"

namespace {
const double kPi = 3.14159265358979323846;

// x rounded to `bits` significant bits, ties to even; below 2^min_exponent to a multiple of
// 2^(min_exponent - bits + 1) (subnormals); above `largest` to infinity.
double round_bits(double x, int bits, int min_exponent, double largest) {
    if (x == 0 || !std::isfinite(x)) return x;
    int e;
    std::frexp(x, &e);                      // |x| = m·2^e with m in [0.5, 1)
    int scale = std::max(e, min_exponent + 1) - bits;  // the value of the last kept bit is 2^scale
    double rounded = std::ldexp(std::nearbyint(std::ldexp(x, -scale)), scale);
    return std::fabs(rounded) > largest ? std::copysign(INFINITY, x) : rounded;
}

// Runs body(i) for every plane i in [begin, end), the planes split among the CPU's cores.
template <class Body>
void for_planes(unsigned begin, unsigned end, Body body) {
    unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), end > begin ? end - begin : 1u));
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
        pool.emplace_back([=] {
            for (unsigned i = begin + w; i < end; i += workers) body(i);
        });
    for (std::thread& t : pool) t.join();
}
}  // namespace

const char* boundary_name(Boundary b) {
    switch (b) {
        case Boundary::Dirichlet: return "dirichlet";
        case Boundary::Neumann: return "neumann";
        case Boundary::Periodic: return "periodic";
    }
    return "?";
}

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::Float: return "float";
        case Precision::Double: return "double";
        case Precision::Half: return "half";
        case Precision::BFloat16: return "bf16";
    }
    return "?";
}

bool parse_boundary(const std::string& text, Boundary& b) {
    for (Boundary x : {Boundary::Dirichlet, Boundary::Neumann, Boundary::Periodic})
        if (text == boundary_name(x)) return b = x, true;
    return false;
}

bool parse_precision(const std::string& text, Precision& p) {
    for (Precision x : {Precision::Float, Precision::Double, Precision::Half, Precision::BFloat16})
        if (text == precision_name(x)) return p = x, true;
    return false;
}

size_t bytes_per_cell(Precision p) {
    return p == Precision::Double ? 8 : p == Precision::Float ? 4 : 2;
}

double unit_roundoff(Precision p) {
    switch (p) {
        case Precision::Float: return std::ldexp(1.0, -24);
        case Precision::Double: return std::ldexp(1.0, -53);
        case Precision::Half: return std::ldexp(1.0, -11);
        case Precision::BFloat16: return std::ldexp(1.0, -8);
    }
    return 0;
}

double round_to(Precision p, double x) {
    switch (p) {
        case Precision::Float: return double(float(x));
        case Precision::Double: return x;
        case Precision::Half: return round_bits(x, 11, -14, 65504.0);
        case Precision::BFloat16: return round_bits(x, 8, -126, 3.3895313892515355e38);
    }
    return x;
}

double HeatGeometry::h() const { return bc == Boundary::Dirichlet ? 1.0 / (N - 1) : 1.0 / (N - 2); }

double HeatGeometry::x(unsigned i) const {
    switch (bc) {
        case Boundary::Dirichlet: return i * h();
        case Boundary::Neumann: return (i - 0.5) * h();
        case Boundary::Periodic: return (double(i) - 1.0) * h();
    }
    return 0;
}

double stable_dt_limit(const HeatGeometry& g, double alpha) { return g.h() * g.h() / (6 * alpha); }

std::string stability_message(const HeatGeometry& g, double alpha, double dt) {
    double limit = stable_dt_limit(g, alpha);
    if (dt <= limit * (1 + 1e-12)) return "";
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "--dt %.4g is above the stability limit of the explicit scheme: dt <= h²/(6α) = %.4g for N = %u "
                  "(h = %.4g, α = %g), i.e. r = α·dt/h² = %.4g > 1/6. Every step would multiply the shortest "
                  "wave on the grid by |1 - 12r| = %.3g, so the solution blows up. Use --dt %.4g or less, or "
                  "--allow-unstable to watch it happen.",
                  dt, limit, g.N, g.h(), alpha, alpha * dt / (g.h() * g.h()),
                  std::fabs(1 - 12 * alpha * dt / (g.h() * g.h())), limit);
    return buf;
}

namespace {
// One axis's factor of a mode with wavenumber n: sin(nπx) (Dirichlet), cos(nπx) (Neumann),
// cos(2nπx) (periodic, period 1).
double mode_factor(Boundary bc, int n, double x) {
    switch (bc) {
        case Boundary::Dirichlet: return std::sin(n * kPi * x);
        case Boundary::Neumann: return std::cos(n * kPi * x);
        case Boundary::Periodic: return std::cos(2 * n * kPi * x);
    }
    return 0;
}

// A = mode (1,1,1) and B = mode (3,2,1), both products of one factor per axis, tabulated once so
// that a cell costs a few multiplications (a 512³ grid would otherwise take 8·10⁸ sines).
struct ExactTable {
    std::vector<double> a, b[3];  // A's factor (the same on every axis); B's factor per axis
    double decay_a, decay_b;      // exp(-λ α t); λ = π²·(1+1+1) and π²·(9+4+1), ×4 for periodic
    ExactTable(const HeatGeometry& g, double alpha, double t) : a(g.N) {
        const int wavenumbers[3] = {3, 2, 1};
        for (int axis = 0; axis < 3; ++axis) b[axis].resize(g.N);
        for (unsigned x = 0; x < g.N; ++x) {
            a[x] = mode_factor(g.bc, 1, g.x(x));
            for (int axis = 0; axis < 3; ++axis) b[axis][x] = mode_factor(g.bc, wavenumbers[axis], g.x(x));
        }
        const double factor = g.bc == Boundary::Periodic ? 4 : 1;
        decay_a = std::exp(-factor * kPi * kPi * 3 * alpha * t);
        decay_b = std::exp(-factor * kPi * kPi * 14 * alpha * t);
    }
    double operator()(unsigned i, unsigned j, unsigned k) const {
        return a[i] * a[j] * a[k] * decay_a + 0.5 * b[0][i] * b[1][j] * b[2][k] * decay_b;
    }
};
}  // namespace

double exact_solution(const HeatGeometry& g, double alpha, double t, unsigned i, unsigned j, unsigned k) {
    return ExactTable(g, alpha, t)(i, j, k);
}

std::string exact_solution_text(Boundary b) {
    switch (b) {
        case Boundary::Dirichlet: return "sin(πx)sin(πy)sin(πz)·e^(-3π²αt) + ½·sin(3πx)sin(2πy)sin(πz)·e^(-14π²αt)";
        case Boundary::Neumann: return "cos(πx)cos(πy)cos(πz)·e^(-3π²αt) + ½·cos(3πx)cos(2πy)cos(πz)·e^(-14π²αt)";
        case Boundary::Periodic:
            return "cos(2πx)cos(2πy)cos(2πz)·e^(-12π²αt) + ½·cos(6πx)cos(4πy)cos(2πz)·e^(-56π²αt)";
    }
    return "";
}

void fill_ghosts(HostGrid& u, unsigned N, Boundary bc) {
    if (bc == Boundary::Dirichlet) return;
    const unsigned low = face_ghost_source(true, N, bc), high = face_ghost_source(false, N, bc);
    for (unsigned a = 1; a + 1 < N; ++a)
        for (unsigned b = 1; b + 1 < N; ++b) {
            u[grid_index(N, 0, a, b)] = u[grid_index(N, low, a, b)];
            u[grid_index(N, N - 1, a, b)] = u[grid_index(N, high, a, b)];
            u[grid_index(N, a, 0, b)] = u[grid_index(N, a, low, b)];
            u[grid_index(N, a, N - 1, b)] = u[grid_index(N, a, high, b)];
            u[grid_index(N, a, b, 0)] = u[grid_index(N, a, b, low)];
            u[grid_index(N, a, b, N - 1)] = u[grid_index(N, a, b, high)];
        }
}

HostGrid random_state(unsigned N, Boundary bc, Precision p, uint64_t seed) {
    std::vector<float> values(grid_cells(N));
    fill_random(values, seed);
    HostGrid u(values.begin(), values.end());
    const size_t plane = size_t(N) * N;
    for_planes(0, N, [&](unsigned i) {
        for (size_t c = i * plane; c < (i + 1) * plane; ++c) u[c] = round_to(p, u[c]);
    });
    fill_ghosts(u, N, bc);
    return u;
}

HostGrid exact_state(const HeatGeometry& g, double alpha, double t, Precision p) {
    const unsigned N = g.N;
    const ExactTable exact(g, alpha, t);
    HostGrid u(grid_cells(N));
    for_planes(0, N, [&](unsigned i) {
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k)
                u[grid_index(N, i, j, k)] = round_to(p, exact(i, j, k));
    });
    fill_ghosts(u, N, g.bc);
    return u;
}

void reference_step(const HostGrid& in, HostGrid& out, unsigned N, Boundary bc, double r, const HostGrid* source,
                    Precision p) {
    out = in;  // ghosts that the boundary condition does not set keep their values
    const size_t plane = size_t(N) * N;
    for_planes(1, N - 1, [&](unsigned i) {
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k) {
                size_t at = grid_index(N, i, j, k);
                double u = in[at];
                double sum = in[at - 1] + in[at + 1] + in[at - N] + in[at + N] + in[at - plane] + in[at + plane];
                double next = u + r * (sum - 6 * u);
                if (source) next += (*source)[at];
                out[at] = round_to(p, next);
            }
    });
    fill_ghosts(out, N, bc);
}

double total_heat(const HostGrid& u, unsigned N) {
    // Neumaier's compensated sum: a plain one over 10^8 cells would drift more than a double
    // grid's own rounding, and the conservation check compares against that rounding.
    double sum = 0, lost = 0;
    for (unsigned i = 1; i + 1 < N; ++i)
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k) {
                double v = u[grid_index(N, i, j, k)], t = sum + v;
                lost += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
                sum = t;
            }
    return sum + lost;
}

double max_relative_error(const HostGrid& u, unsigned N, const std::function<double(unsigned, unsigned, unsigned)>& exact) {
    std::vector<double> err(N, 0), size(N, 0);  // per plane, so that the planes can run in parallel
    for_planes(1, N - 1, [&](unsigned i) {
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k) {
                double e = exact(i, j, k), d = std::fabs(u[grid_index(N, i, j, k)] - e);
                err[i] = std::isnan(d) || std::isnan(err[i]) ? NAN : std::max(err[i], d);
                size[i] = std::max(size[i], std::fabs(e));
            }
    });
    double worst = 0, largest = 0;
    for (unsigned i = 0; i < N; ++i) {
        worst = std::isnan(err[i]) || std::isnan(worst) ? NAN : std::max(worst, err[i]);
        largest = std::max(largest, size[i]);
    }
    return largest > 0 ? worst / largest : worst;
}

double error_against_exact(const HostGrid& u, const HeatGeometry& g, double alpha, double t) {
    const ExactTable exact(g, alpha, t);
    return max_relative_error(u, g.N, [&](unsigned i, unsigned j, unsigned k) { return exact(i, j, k); });
}

double poisson_solution(const HeatGeometry& g, unsigned i, unsigned j, unsigned k) {
    return std::sin(kPi * g.x(i)) * std::sin(kPi * g.x(j)) * std::sin(kPi * g.x(k));
}

FusedSchedule fused_schedule(unsigned steps, unsigned S) {
    FusedSchedule f;
    f.passes = S > 1 ? steps / S : 0;
    f.single_steps = steps - f.passes * S;
    return f;
}

double fused_bytes_per_update(const FusedTile& tile, unsigned S, size_t cell_bytes) {
    const double read = double(tile.read_j) * tile.read_k, written = double(tile.write_j) * tile.write_k;
    const double planes_read = tile.planes > 0 ? double(tile.planes + 2 * S) / tile.planes : 1.0;
    return double(cell_bytes) * (read * planes_read + written) / (written * S);
}
