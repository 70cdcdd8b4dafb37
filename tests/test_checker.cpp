// The checker must catch every planted fault and name the likely cause.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "check.h"
#include "sweep/checker.h"
#include "common/grid.h"
#include "sweep/reference.h"

namespace {
const unsigned N = 20;
const unsigned kTile = 7;  // tiles cover cells 0..18: 0-6, 7-13 and a partial one, 14-18

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A correct sweep, with each cell's weights `w` (a mistake can be planted through them).
std::vector<float> sweep(const std::vector<float>& in, const double w[7]) {
    std::vector<float> out(in.size());
    poison_output(in.data(), out.data(), N);
    for (unsigned i = 1; i < N - 1; ++i)
        for (unsigned j = 1; j < N - 1; ++j)
            for (unsigned k = 1; k < N - 1; ++k) out[grid_index(N, i, j, k)] = float(stencil_point(in.data(), N, w, i, j, k));
    return out;
}
}  // namespace

int main() {
    std::vector<float> in(grid_cells(N));
    fill_random(in, 1);
    const Coefficients c = random_coefficients(1);
    double w[7];
    coefficient_array(c, w);
    const std::vector<float> good = sweep(in, w);
    const float nan = std::numeric_limits<float>::quiet_NaN();

    // Poisoning: interior NaN, boundary equal to the input.
    std::vector<float> poisoned(in.size());
    poison_output(in.data(), poisoned.data(), N);
    CHECK(std::isnan(poisoned[grid_index(N, 1, 1, 1)]));
    CHECK(poisoned[grid_index(N, 0, 5, 5)] == in[grid_index(N, 0, 5, 5)]);
    CHECK(poisoned[grid_index(N, 5, 5, N - 1)] == in[grid_index(N, 5, 5, N - 1)]);

    // A correct sweep passes, with float32 rounding only.
    CheckResult r = check_output(in.data(), good.data(), N, c, kTile);
    CHECK(r.ok());
    CHECK(r.max_rel_err < 1e-6);
    CHECK(describe_failure(r).empty());

    // The untouched poisoned output: every interior cell unwritten.
    r = check_output(in.data(), poisoned.data(), N, c, kTile);
    CHECK(!r.ok());
    CHECK(r.wrong == interior_cells(N) && r.unwritten == interior_cells(N));
    CHECK(std::isinf(r.max_rel_err));
    CHECK(contains(r.hint, "never written"));

    // One wrong cell: counted, located, reported with expected and got.
    std::vector<float> out = good;
    out[grid_index(N, 7, 8, 9)] *= 1.001f;
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(!r.ok() && r.wrong == 1 && r.unwritten == 0 && r.boundary_modified == 0);
    CHECK(r.first_wrong.size() == 1 && r.first_wrong[0].i == 7 && r.first_wrong[0].j == 8 && r.first_wrong[0].k == 9);
    CHECK(contains(describe_failure(r), "(7, 8, 9)"));

    // An error below the tolerance passes; one above fails.
    out = good;
    out[grid_index(N, 3, 3, 3)] *= 1.0f + 2e-6f;
    CHECK(check_output(in.data(), out.data(), N, c, kTile).ok());
    out[grid_index(N, 3, 3, 3)] = good[grid_index(N, 3, 3, 3)] * (1.0f + 1e-4f);
    CHECK(!check_output(in.data(), out.data(), N, c, kTile).ok());

    // An unwritten (NaN) cell.
    out = good;
    out[grid_index(N, 2, 3, 4)] = nan;
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(!r.ok() && r.wrong == 1 && r.unwritten == 1);
    CHECK(contains(describe_failure(r), "never written"));

    // A boundary write.
    out = good;
    out[grid_index(N, 0, 3, 4)] += 1.0f;
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(!r.ok() && r.wrong == 0 && r.boundary_modified == 1);
    CHECK(contains(describe_failure(r), "boundary"));

    // Two neighbours swapped (j-1 and j+1): named in the hint.
    double s[7];
    coefficient_array(c, s);
    std::swap(s[3], s[4]);
    r = check_output(in.data(), sweep(in, s).data(), N, c, kTile);
    CHECK(!r.ok() && r.wrong > interior_cells(N) / 2);
    CHECK(contains(r.hint, "c3 and c4"));

    // A dropped term (no i+1 neighbour).
    coefficient_array(c, s);
    s[6] = 0;
    r = check_output(in.data(), sweep(in, s).data(), N, c, kTile);
    CHECK(contains(r.hint, "without its c6"));

    // A thread mapping shifted by one in k: each cell holds its k+1 neighbour's value.
    out = good;
    for (unsigned i = 1; i < N - 1; ++i)
        for (unsigned j = 1; j < N - 1; ++j)
            for (unsigned k = 1; k < N - 2; ++k) out[grid_index(N, i, j, k)] = good[grid_index(N, i, j, k + 1)];
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(!r.ok());
    CHECK(contains(r.hint, "shifted") && contains(r.hint, "k+1"));

    // Wrong values on tile faces only (a halo loading mistake).
    out = good;
    for (unsigned i = 1; i < N - 1; ++i)
        for (unsigned j = 1; j < N - 1; ++j) out[grid_index(N, i, j, kTile)] += 0.5f;
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(contains(r.hint, "faces of output tiles"));

    // Unwritten cells in the last, partial tile only (the grid of blocks rounded down).
    out = good;
    for (unsigned i = 1; i < N - 1; ++i)
        for (unsigned j = 1; j < N - 1; ++j)
            for (unsigned k = (N - 1) / kTile * kTile; k < N - 1; ++k) out[grid_index(N, i, j, k)] = nan;
    r = check_output(in.data(), out.data(), N, c, kTile);
    CHECK(contains(r.hint, "partial tile"));

    // Wrong values next to the grid boundary only.
    out = good;
    for (unsigned j = 1; j < N - 1; ++j)
        for (unsigned k = 1; k < N - 1; ++k) out[grid_index(N, N - 2, j, k)] *= 0.5f;
    r = check_output(in.data(), out.data(), N, c, /*out_tile_dim=*/0);
    CHECK(contains(r.hint, "next to the grid boundary"));

    // Guard and input flags make the result fail and are explained.
    r = check_output(in.data(), good.data(), N, c, kTile);
    r.guard_violated = true;
    CHECK(!r.ok() && contains(describe_failure(r), "outside the output array"));
    r.guard_violated = false;
    r.input_modified = true;
    CHECK(!r.ok() && contains(describe_failure(r), "input grid changed"));
    return test_exit_code();
}
