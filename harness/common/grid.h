#pragma once
// N×N×N grids of floats, stored as in the book: cell (i, j, k) at i*N*N + j*N + k,
// k varying fastest. Cells with any index 0 or N-1 are boundary cells.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/coefficients.h"

inline size_t grid_cells(unsigned N) { return size_t(N) * N * N; }
inline size_t interior_cells(unsigned N) { return N < 3 ? 0 : size_t(N - 2) * (N - 2) * (N - 2); }
inline size_t grid_index(unsigned N, unsigned i, unsigned j, unsigned k) {
    return (size_t(i) * N + j) * N + k;
}
inline bool is_boundary(unsigned N, unsigned i, unsigned j, unsigned k) {
    return i == 0 || j == 0 || k == 0 || i == N - 1 || j == N - 1 || k == N - 1;
}

// Under nvcc the two functions below are __host__ __device__: the GPU runners make their
// --time-only inputs with them, the same numbers as on the host.
#ifdef __CUDACC__
#define GRID_HOST_DEVICE __host__ __device__
#else
#define GRID_HOST_DEVICE
#endif

// splitmix64's output function: the draw that follows the state z (fast, and the same numbers on
// every platform, which std::*_distribution are not).
GRID_HOST_DEVICE inline uint64_t splitmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
constexpr uint64_t kSplitmixStep = 0x9E3779B97F4A7C15ull;  // splitmix64's state advances by this per draw
// The next draw of the sequence whose state is `state`, uniform in [0, 1).
GRID_HOST_DEVICE inline double uniform01(uint64_t& state) { return double(splitmix64(state += kSplitmixStep) >> 11) * 0x1.0p-53; }

// Uniform in [0.5, 1.5): never zero, so an unwritten cell or a dropped term always shows.
void fill_random(std::vector<float>& grid, uint64_t seed);
// The value fill_random(grid, seed) puts at grid[index], computed alone (splitmix64 is a counter
// generator), so that one GPU's slab of a grid too large for the host can be made plane by plane,
// and a GPU can make a whole grid.
GRID_HOST_DEVICE inline float random_value(uint64_t seed, size_t index) {
    uint64_t state = seed + uint64_t(index) * kSplitmixStep;  // the state before draw number `index`
    return float(0.5 + uniform01(state));
}

// Seven distinct weights in [0.1, 1.0), at least 0.05 apart, so that a kernel that
// swaps two neighbours (or two coefficients) gives a visibly different result.
Coefficients random_coefficients(uint64_t seed);
