#pragma once
// The interface between the one-sweep runner's order-R program (sweep/order_main.cu) and stage 10,
// the star stencil of order R = 1..kMaxOrder. The stage file defines the launcher and the
// description declared here; R is a template parameter of its kernels, chosen at run time.
#include <cuda_runtime.h>

#include "sweep/order.h"

using Status = cudaError_t;

// What the runner reports about one of the stage's kernels at one order.
struct OrderKernelInfo {
    const char* figure;    // "Fig. 8.12"
    OrderTiles tiles;      // the parameters of its textbook OP/B model (order_opb)
    TileShape out_tiles;   // where its output tiles lie, for the checker's halo hint
    const void* kernel;    // the kernel instance for order R, for the resource report
    dim3 block;            // its threads per block
    size_t dynamic_shared_bytes;
};

struct OrderStageInfo {
    const char* id;     // "10_high_order"
    const char* title;  // "Higher-order stencils"
    OrderKernelInfo (*describe)(OrderKernel k, unsigned R, unsigned N);
};

extern const OrderStageInfo kOrderStage;

// Sweeps the interior of the N×N×N grid `in` into `out` with the star stencil of order R
// (1 <= R <= kMaxOrder) and kernel `k`. The interior is R..N-1-R along each axis; the boundary, R
// cells wide, keeps its values (the harness makes them equal to `in`'s; a kernel may write a
// boundary cell with that same value). N <= 2R leaves no interior: nothing to do.
Status launch_stencil_order(const float* in, float* out, unsigned N, const StarCoefficients& c, unsigned R,
                            OrderKernel k, cudaStream_t s);

#include "common/exercise.h"
