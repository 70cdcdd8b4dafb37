#pragma once
// The interface between the harness and a time-stepping stage (07 onward). Each such stage's
// stencil.cu defines what is declared here: its step launcher, its time loop and kHeatStage.
#include <cuda_runtime.h>

#include "heat.h"

using Status = cudaError_t;

// What one step computes: every state cell becomes u + r·(sum of the six neighbours - 6u)
// (+ source), and the ghosts follow `bc` (see heat.h).
struct HeatStep {
    Boundary bc = Boundary::Dirichlet;
    Precision precision = Precision::Float;
    double r = 0;                  // α·dt/h²
    const void* source = nullptr;  // a grid added to each step, same precision (Jacobi's -h²f/6); null: none
};

// The kernel that runs for a precision and N, for the resource report.
struct KernelShape {
    const void* kernel;
    dim3 block;
    unsigned cells_per_thread;  // along k
};

struct HeatStageInfo {
    const char* id;     // "07_heat_equation"
    const char* title;  // "The time loop: the heat equation"
};
extern const HeatStageInfo kHeatStage;

KernelShape heat_kernel_shape(Precision p, unsigned N);

// One step from grid `in` into grid `out` on stream s. Returns the launch's error.
Status launch_heat_step(const void* in, void* out, unsigned N, const HeatStep& step, cudaStream_t s);

// `steps` steps starting from the state in `a`, with `b` as the second buffer; both hold the
// initial state with its ghosts. Sets *result to the buffer that holds the final state.
Status run_steps(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s,
                 void** result);

#include "exercise.h"
