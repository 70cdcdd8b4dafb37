#pragma once
// The interface between the harness and a time-stepping stage (07 onward). Each such stage's
// stencil.cu defines what is declared here: its step launcher, its time loop, the shape of its
// kernel and kHeatStage.
#include <cuda_runtime.h>

#include "heat/heat.h"

using Status = cudaError_t;

// What one step computes: every state cell becomes u + r·(sum of the six neighbours - 6u)
// (+ source), and the ghosts follow `bc` (see heat.h).
struct HeatStep {
    Boundary bc = Boundary::Dirichlet;
    Precision precision = Precision::Float;
    double r = 0;                  // α·dt/h²
    const void* source = nullptr;  // a grid added to each step, same precision (Jacobi's -h²f/6); null: none
    unsigned fused_steps = 1;      // S: steps per trip through memory (stage 08's --fuse); 1 elsewhere
};

// The kernel that runs for a step and N, for the resource report and the checker's hints.
struct KernelShape {
    const void* kernel;
    dim3 block;
    unsigned cells_per_thread;  // along k
    size_t shared_bytes = 0;    // dynamic shared memory per block
    unsigned tile_j = 0, tile_k = 0;  // the rows and columns of a plane that one block writes; 0: no tiles
    unsigned tile_i = 0;              // the planes one block writes; 0: all of them
    unsigned tiles_start_k = 1;       // the column where the first tile's written columns start
    unsigned read_j = 0, read_k = 0;  // the rows and columns one block reads: its tile and the halo
};

struct HeatStageInfo {
    const char* id;               // "07_heat_equation"
    const char* title;            // "The time loop: the heat equation"
    unsigned max_fused_steps = 1;  // --fuse S accepts S = 1..this
};
extern const HeatStageInfo kHeatStage;

KernelShape heat_kernel_shape(const HeatStep& step, unsigned N);

// One step from grid `in` into grid `out` on stream s. Returns the launch's error.
Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s);

// `steps` steps starting from the state in `a`, with `b` as the second buffer; both hold the
// initial state with its ghosts. Sets *result to the buffer that holds the final state.
Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result);

#include "common/exercise.h"
