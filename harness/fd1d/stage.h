#pragma once
// The interface between the 1D program (harness/fd1d/main.cu) and stage 01's stencil.cu, the 1D
// counterpart of stage.h: the stage file defines kStage1D and launch_derivative.
#include <cuda_runtime.h>

#include "fd1d/finite_difference.h"

using Status = cudaError_t;

struct Stage1DInfo {
    const char* id;      // "01_discretization"
    const char* title;   // "Discretization: 1D central differences"
    const char* figure;  // "Fig. 8.2"
    unsigned block;      // threads per block
};

extern const Stage1DInfo kStage1D;

// Writes the derivative-th derivative (1 or 2) of the n samples f, spaced h apart, into out, with
// the central-difference stencil of the given order (1, 2, 3: 3, 5, 7 points; the weights are
// those of harness/fd1d/finite_difference.h). Only the points where the stencil fits,
// order <= i < n - order, are written; the first and last `order` points of out are left
// untouched. Returns the first error (cudaErrorInvalidValue for a derivative or order without a
// stencil), else the launch's (cudaGetLastError()).
Status launch_derivative(const float* f, float* out, unsigned n, float h, int order, int derivative, cudaStream_t s);

#include "common/exercise.h"
