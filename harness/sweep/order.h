#pragma once
// Stage 10: the 3D star stencil of order R (PMPP Fig. 8.3: R cells on each side of the centre
// along each axis, 6R + 1 points; R = 1 is stages 02-06's 7-point stencil). Its weights, the
// float64 CPU reference, the checker (a boundary R cells wide) and the textbook OP/B model.
// Plain C++: the unit tests link it without CUDA; the kernels include it for the weights' layout.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sweep/checker.h"
#include "sweep/model.h"

constexpr unsigned kMaxOrder = 4;

#ifdef __CUDACC__
#define STAR_HD __host__ __device__
#else
#define STAR_HD
#endif

// The six directions, in the order of stages 02-06's c1..c6: k-1, k+1, j-1, j+1, i-1, i+1.
enum StarDirection { kMinusK, kPlusK, kMinusJ, kPlusJ, kMinusI, kPlusI };

// The weight of the neighbour at distance d (1..R) in direction `dir` is w[star_weight(d, dir)];
// w[0] is the centre's. For R = 1 the layout is c0..c6 of stages 02-06.
STAR_HD constexpr int star_weight(int d, int dir) { return 1 + 6 * (d - 1) + dir; }
STAR_HD constexpr int star_points(int R) { return 6 * R + 1; }
STAR_HD constexpr int star_flops(int R) { return 12 * R + 1; }  // 6R + 1 multiplications, 6R additions

// 6R + 1 weights, all different (the harness draws them at run time), so that a kernel that reads
// a neighbour at the wrong distance or on the wrong axis gets a visibly different result.
struct StarCoefficients {
    float w[1 + 6 * kMaxOrder];
};

// 6R + 1 distinct weights in [0.1, 1.0), at least kStarMargin apart; the rest of w[] is 0.
constexpr float kStarMargin = 0.02f;
StarCoefficients random_star_coefficients(uint64_t seed, unsigned R);

// "centre", "k-1", "j+3", ...: the neighbour that weight number n goes with.
std::string star_term_name(unsigned n);

// Cells with an index below R or above N-1-R hold the boundary: a sweep of order R leaves them.
inline bool is_star_boundary(unsigned N, unsigned R, unsigned i, unsigned j, unsigned k) {
    return i < R || j < R || k < R || i + R >= N || j + R >= N || k + R >= N;
}
inline size_t star_interior_cells(unsigned N, unsigned R) {
    return N <= 2 * R ? 0 : size_t(N - 2 * R) * (N - 2 * R) * (N - 2 * R);
}

// sum over the 6R + 1 points of w[n] * in[neighbour n], in double; (i, j, k) must be interior.
double star_point(const float* in, unsigned N, unsigned R, const double* w, unsigned i, unsigned j, unsigned k);
double star_reference_point(const float* in, unsigned N, unsigned R, const StarCoefficients& c, unsigned i,
                            unsigned j, unsigned k);

// Where a kernel's output tiles lie, for the halo hints: along axis a (0 = i, 1 = j, 2 = k) tiles
// of size[a] cells start at origin[a] + b·size[a]; size 0 = no tiling along that axis.
struct TileShape {
    unsigned size[3] = {0, 0, 0};
    unsigned origin[3] = {0, 0, 0};
};

// Interior cells NaN, the boundary (R cells wide) equal to `in`.
void poison_output_order(const float* in, float* out, unsigned N, unsigned R);
// As check_output (sweep/checker.h) for order R; r.boundary_width = R.
CheckResult check_output_order(const float* in, const float* out, unsigned N, unsigned R, const StarCoefficients& c,
                               const TileShape& tiles);

// The three kernels of stage 10 and their textbook OP/B (FLOPs per byte loaded from global memory,
// counting each load the kernel issues, ignoring caches):
//   Basic  (Fig. 8.6): every output loads its 6R + 1 inputs: (12R+1) / (4·(6R+1)).
//   Tiled  (Fig. 8.12): a T×T plane per step with a halo of R, Z output planes per block:
//          (12R+1)·(T-2R)²·Z / (4·T²·(Z+2R)); with Z = T-2R as in the book, (12R+1)·(T-2R)³ / (4·T³).
//   Fast   (beyond the book): a block of BX×BY cells walks Z planes; per output its own cell (plus
//          2R planes per chunk of Z), the j halo (2R rows) and the k halo (a float4 each side) of its
//          plane: (12R+1) / (4·(1 + 2R/Z + 2R/BY + 8/BX)).
// All tend to the bound (12R+1)/4 as the tiles grow.
enum class OrderKernel { Basic, Tiled, Fast };
const char* order_kernel_name(OrderKernel k);  // "basic", "tiled", "fast"
struct OrderTiles {
    unsigned T = 0;           // Tiled: the input tile's edge
    unsigned Z = 0;           // Tiled, Fast: output planes per block
    unsigned BX = 0, BY = 0;  // Fast: cells along k and j
};
OpbModel order_opb(OrderKernel k, unsigned R, const OrderTiles& t);
inline double order_opb_bound(unsigned R) { return star_flops(int(R)) / 4.0; }
