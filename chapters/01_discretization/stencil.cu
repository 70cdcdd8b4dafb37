// Stage 01 - discretization: a 1D central-difference stencil (PMPP Section 8.1, Fig. 8.2).
// Lesson: chapters/01_discretization/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "fd1d/stage.h"

constexpr unsigned BLOCK_SIZE = 256;

// The stencil's weights, already divided by denominator · h^derivative: weights[j + order]
// multiplies f[i + j]. In constant memory, like the convolution filter of Chapter 7: every
// thread of a warp reads the same weight at the same time.
__constant__ float weights[kMaxStencilPoints];

// One thread per grid point. The first and last `order` points, where the stencil does not fit,
// are left untouched.
__global__ void derivative_kernel(const float* f, float* out, unsigned int n, unsigned int order) {
    // ---- EXERCISE 1 of 3: this thread's grid point i ----
    // TODO: compute i from blockIdx.x, blockDim.x and threadIdx.x: block b holds the points
    // b*blockDim.x .. b*blockDim.x + blockDim.x - 1.
    [[maybe_unused]] unsigned int i = 0;
    // ---- END EXERCISE ----

    // ---- EXERCISE 2 of 3: only where the stencil fits, the weighted sum of f[i-order] .. f[i+order] ----
    // TODO: if order <= i < n - order (the stencil fits), write
    //   out[i] = weights[0] * f[i - order] + ... + weights[order] * f[i] + ... + weights[2*order] * f[i + order],
    // a loop over j = -order .. +order adding weights[j + order] * f[i + j]. Leave every other
    // point of out alone: the first and last `order` points have no value here.
    // ---- END EXERCISE ----
}

Status launch_derivative(const float* f, float* out, unsigned n, float h, int order, int derivative, cudaStream_t s) {
    float w[kMaxStencilPoints];
    if (!float_weights(derivative, order, h, w)) return cudaErrorInvalidValue;
    // From pageable memory the copy has taken `w` before the call returns; the kernel, queued
    // after it on the same stream, sees the new weights.
    Status e = cudaMemcpyToSymbolAsync(weights, w, sizeof(float) * (2 * order + 1), 0, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) return e;
    // ---- EXERCISE 3 of 3: enough blocks of BLOCK_SIZE threads to cover all n points ----
    // TODO: grid.x blocks of BLOCK_SIZE threads must cover n points (round up: ceil_div in
    // harness/fd1d/stage.h).
    dim3 grid(1);
    // ---- END EXERCISE ----
    derivative_kernel<<<grid, BLOCK_SIZE, 0, s>>>(f, out, n, unsigned(order));
    return cudaGetLastError();
}

const Stage1DInfo kStage1D = {"01_discretization", "Discretization: 1D central differences", "Fig. 8.2", BLOCK_SIZE};
