// The CPU reference against cases with a closed-form answer.
#include <cmath>
#include <vector>

#include "check.h"
#include "common/grid.h"
#include "sweep/reference.h"

int main() {
    const unsigned N = 9;
    std::vector<float> in(grid_cells(N));

    // On a quadratic field the discrete Laplacian (c0 = -6, the rest 1) is exact:
    // f = a i² + b j² + c k² + linear terms  ->  2a + 2b + 2c at every interior cell.
    const double a = 3, b = -2, c = 5;
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k)
                in[grid_index(N, i, j, k)] = float(a * i * i + b * j * j + c * k * k + 7.0 * i - 4.0 * j + k + 11);
    const Coefficients laplacian{-6, 1, 1, 1, 1, 1, 1};
    for (unsigned i = 1; i < N - 1; ++i)
        for (unsigned j = 1; j < N - 1; ++j)
            for (unsigned k = 1; k < N - 1; ++k) CHECK(reference_point(in.data(), N, laplacian, i, j, k) == 2 * (a + b + c));

    // A single 1 in a field of zeros gives each coefficient back at the neighbour whose
    // stencil reaches the 1 through that coefficient: c1 (the k-1 term) at (4, 4, 5), etc.
    std::fill(in.begin(), in.end(), 0.0f);
    in[grid_index(N, 4, 4, 4)] = 1.0f;
    const Coefficients w{0.11f, 0.22f, 0.33f, 0.44f, 0.55f, 0.66f, 0.77f};
    CHECK(reference_point(in.data(), N, w, 4, 4, 4) == double(w.c0));
    CHECK(reference_point(in.data(), N, w, 4, 4, 5) == double(w.c1));
    CHECK(reference_point(in.data(), N, w, 4, 4, 3) == double(w.c2));
    CHECK(reference_point(in.data(), N, w, 4, 5, 4) == double(w.c3));
    CHECK(reference_point(in.data(), N, w, 4, 3, 4) == double(w.c4));
    CHECK(reference_point(in.data(), N, w, 5, 4, 4) == double(w.c5));
    CHECK(reference_point(in.data(), N, w, 3, 4, 4) == double(w.c6));
    CHECK(reference_point(in.data(), N, w, 5, 5, 4) == 0.0);  // a diagonal cell is not in the stencil

    // The accumulation is in double: this sum is not representable in float.
    std::fill(in.begin(), in.end(), 1.0f);
    in[grid_index(N, 4, 4, 4)] = 16777216.0f;  // 2^24
    const Coefficients ones{1, 1, 1, 1, 1, 1, 1};
    CHECK(reference_point(in.data(), N, ones, 4, 4, 4) == 16777222.0);

    // Random data: never zero, in [0.5, 1.5), reproducible; coefficients distinct.
    std::vector<float> r1(grid_cells(N)), r2(grid_cells(N));
    fill_random(r1, 42);
    fill_random(r2, 42);
    CHECK(r1 == r2);
    fill_random(r2, 43);
    CHECK(r1 != r2);
    for (float v : r1) CHECK(v >= 0.5f && v < 1.5f);
    for (uint64_t seed = 0; seed < 50; ++seed) {
        Coefficients k = random_coefficients(seed);
        const float cs[7] = {k.c0, k.c1, k.c2, k.c3, k.c4, k.c5, k.c6};
        for (int p = 0; p < 7; ++p) {
            CHECK(cs[p] >= 0.1f && cs[p] < 1.0f);
            for (int q = p + 1; q < 7; ++q) CHECK(std::fabs(cs[p] - cs[q]) >= 0.05f);
        }
    }
    return test_exit_code();
}
