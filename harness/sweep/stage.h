#pragma once
// The interface between the harness and a stage. Each stage's stencil.cu (chapters/ and
// solutions/ alike) defines the two things declared here: its kernel launcher and kStage.
#include <cuda_runtime.h>

#include "common/coefficients.h"
#include "sweep/model.h"

using Status = cudaError_t;

struct StageInfo {
    const char* id;        // "03_shared_tiling"
    const char* title;     // "Shared-memory tiling"
    const char* figure;    // "Fig. 8.8"
    OpbFormula formula;    // which textbook OP/B model applies
    unsigned in_tile_dim;  // T, the input tile's edge (0 if the stage does not tile)
    unsigned out_tile_dim; // T - 2
    unsigned z_coarsening; // output planes per block along i (1 without coarsening)
    const void* kernel;    // the kernel, for the resource report
    dim3 block;            // its threads per block
    size_t dynamic_shared_bytes;
};

extern const StageInfo kStage;

// Sweeps the interior of the N×N×N grid `in` into `out` on stream `s`; boundary cells of
// `out` keep their values, which the harness makes equal to `in`'s (a stage may write one with
// that same value, as stage 06 does to write whole sectors). Returns the launch's error
// (cudaGetLastError()).
Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s);

#include "common/exercise.h"
