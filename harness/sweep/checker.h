#pragma once
// Verifies one stencil sweep against the CPU reference and explains what went wrong.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "common/coefficients.h"
#include "common/record.h"

// Per-cell |got - expected| / |expected| above this fails. Inputs and weights are positive,
// so |expected| >= 0.35 and float32 rounding of 7 products stays far below it (~1e-7).
constexpr double kTolerance = 1e-5;
inline bool close_enough(double expected, double got) {
    return std::fabs(got - expected) <= kTolerance * std::fabs(expected);
}

struct CheckResult {
    size_t wrong = 0;              // interior cells off by more than kTolerance (NaN included)
    size_t unwritten = 0;          // interior cells still holding the NaN poison
    size_t boundary_modified = 0;  // boundary cells that differ from the input
    double max_rel_err = 0;        // over all interior cells (infinity if any is NaN)
    bool input_modified = false;   // set by the GPU runner when `in` changed
    bool guard_violated = false;   // set by the GPU runner when a write landed outside `out`
    unsigned boundary_width = 1;   // R for a stencil of order R (stage 10): the boundary's layers
    std::vector<WrongCell> first_wrong;
    std::string hint;              // the likely cause, when the pattern of errors is recognisable
    bool ok() const { return wrong == 0 && boundary_modified == 0 && !input_modified && !guard_violated; }
};

// Interior cells become NaN (so an unwritten cell is caught); boundary cells equal `in`.
void poison_output(const float* in, float* out, unsigned N);

// One interior cell (cell.got against cell.expected) into r: the largest relative error, and when
// it is off by more than kTolerance the counts, the first wrong cells and (numbers only, at most
// 16) a sample for the hints. True when the cell is wrong. Shared by every one-sweep checker.
bool count_cell(CheckResult& r, std::vector<WrongCell>& sample, const WrongCell& cell);

// `out_tile_dim` (0 if the stage does not tile) lets the hint recognise halo mistakes.
CheckResult check_output(const float* in, const float* out, unsigned N, const Coefficients& c,
                         unsigned out_tile_dim);

// A few lines for the learner: what failed, the first wrong cells, the hint.
std::string describe_failure(const CheckResult& r);
