#pragma once
// The CPU reference: one output point of the 7-point stencil, accumulated in double.
#include "common/coefficients.h"

// Neighbour n of the stencil, in the order of the coefficients c0..c6 (PMPP Fig. 8.6).
struct Neighbour {
    int di, dj, dk;
    const char* name;
};
extern const Neighbour kNeighbours[7];

// sum over n of w[n] * in[i+di, j+dj, k+dk]; (i, j, k) must be an interior cell.
double stencil_point(const float* in, unsigned N, const double w[7], unsigned i, unsigned j, unsigned k);
double reference_point(const float* in, unsigned N, const Coefficients& c, unsigned i, unsigned j, unsigned k);
void coefficient_array(const Coefficients& c, double w[7]);
