// Stage 03 - shared-memory tiling (PMPP Fig. 8.8).
// Lesson: chapters/03_shared_tiling/README.md
// I AM NOT DONE: delete the next line when you start on this exercise.
#define I_AM_NOT_DONE
#include "sweep/stage.h"

// One block per input tile of IN_TILE_DIM³ cells: every thread loads one input cell; the
// threads of the inner OUT_TILE_DIM³ cube also compute one output each.
constexpr int IN_TILE_DIM = 8;
constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;

__global__ void stencil_kernel(const float* in, float* out, unsigned int N, Coefficients c) {
    // ---- EXERCISE 1 of 4: the input cell (i, j, k) this thread loads ----
    // TODO: i, j, k as ints (they can be -1). blockIdx picks the tile, threadIdx the cell in it.
    int i = 0;
    int j = 0;
    int k = 0;
    // ---- END EXERCISE ----

    __shared__ float in_s[IN_TILE_DIM][IN_TILE_DIM][IN_TILE_DIM];

    // ---- EXERCISE 2 of 4: load the input tile into in_s, then wait for the whole block ----
    // TODO: if (i, j, k) is inside the grid (0 <= index < N), copy in[i*N*N + j*N + k] into
    // in_s[threadIdx.z][threadIdx.y][threadIdx.x]. Then a barrier: no thread may read in_s
    // before every thread has written its cell.
    // ---- END EXERCISE ----

    // ---- EXERCISE 3 of 4: interior cells of the grid, inner threads of the tile: the stencil from in_s ----
    // TODO: threads whose (i, j, k) is an interior cell of the grid AND that sit in the inner
    // OUT_TILE_DIM³ cube of the tile (threadIdx 1..IN_TILE_DIM-2 in x, y, z) write
    // out[i*N*N + j*N + k]: c.c0..c.c6 times the centre, x-1, x+1, y-1, y+1, z-1, z+1 cells of in_s.
    // ---- END EXERCISE ----
}

Status launch_stencil(const float* in, float* out, unsigned N, const Coefficients& c, cudaStream_t s) {
    // ---- EXERCISE 4 of 4: a block per input tile; the output tiles must cover cells 0..N-2 ----
    // TODO: one thread per input-tile cell; enough tiles that their outputs reach cell N-2.
    dim3 block(1, 1, 1);
    dim3 grid(1, 1, 1);
    // ---- END EXERCISE ----
    stencil_kernel<<<grid, block, 0, s>>>(in, out, N, c);
    return cudaGetLastError();
}

const StageInfo kStage = {
    "03_shared_tiling", "Shared-memory tiling", "Fig. 8.8", OpbFormula::CubeTile,
    /*in_tile_dim=*/IN_TILE_DIM, /*out_tile_dim=*/OUT_TILE_DIM, /*z_coarsening=*/1,
    reinterpret_cast<const void*>(stencil_kernel), dim3(IN_TILE_DIM, IN_TILE_DIM, IN_TILE_DIM),
    /*dynamic_shared_bytes=*/0,
};
