#pragma once
// The heat equation u_t = α∇²u on the unit cube: what stages 07 onward compute, on the CPU.
// The grid is N×N×N cells as in every stage (index i*N*N + j*N + k). Cells 1..N-2 along each
// axis are the state; the cells with an index 0 or N-1 are ghost cells, and the boundary
// condition says what they hold:
//   Dirichlet  fixed values (the boundary itself), never written by a step
//   Neumann    zero flux: each face ghost mirrors the state cell next to it (ghost 0 = cell 1)
//   periodic   the domain wraps: each face ghost copies the state cell on the far side
//              (ghost 0 = cell N-2, ghost N-1 = cell 1)
// Only face ghosts (one index 0 or N-1) are ever read by the 7-point stencil; edge and corner
// ghosts keep their values.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

enum class Boundary { Dirichlet, Neumann, Periodic };
enum class Precision { Float, Double, Half, BFloat16 };  // how a cell is stored

const char* boundary_name(Boundary b);    // "dirichlet", ...
const char* precision_name(Precision p);  // "float", "double", "half", "bf16"
bool parse_boundary(const std::string& text, Boundary& b);
bool parse_precision(const std::string& text, Precision& p);
size_t bytes_per_cell(Precision p);
// The relative rounding error of one stored value (2^-24 for float, 2^-11 for half, ...).
double unit_roundoff(Precision p);
// x rounded to the nearest value the storage type holds (ties to even), as the GPU stores it.
double round_to(Precision p, double x);

// The grid's geometry for one boundary condition.
//   Dirichlet: the cells are points x = i·h with h = 1/(N-1); the ghosts sit on the faces x = 0, 1.
//   Neumann:   cells are cubes of side h = 1/(N-2) with centres x = (i - ½)·h; the faces x = 0, 1 lie
//              half-way between a ghost and its mirror, so the mirror makes the flux there zero.
//   periodic:  N-2 cells of side h = 1/(N-2) per period, x = (i - 1)·h.
struct HeatGeometry {
    unsigned N;
    Boundary bc;
    double h() const;
    double x(unsigned i) const;  // the coordinate of cell i along any axis
};

// The explicit scheme is stable for r = α·dt/h² <= 1/6: dt <= h²/(6α).
double stable_dt_limit(const HeatGeometry& g, double alpha);
// "" when dt is stable; else the message that refuses it, with the limit and the value given.
std::string stability_message(const HeatGeometry& g, double alpha, double dt);

// The analytic solution used to test each boundary condition: two eigenmodes of the Laplacian
// that satisfy it, u = A(x,y,z)·exp(-λ_A α t) + ½·B(x,y,z)·exp(-λ_B α t). B decays faster and is
// not symmetric in x, y, z, so a mix-up of axes shows.
double exact_solution(const HeatGeometry& g, double alpha, double t, unsigned i, unsigned j, unsigned k);
std::string exact_solution_text(Boundary b);  // "sin(πx)sin(πy)sin(πz)e^(-3π²αt) + ..." for the report

// A grid in double, every value one that the storage precision holds exactly.
using HostGrid = std::vector<double>;

// Random values in [0.5, 1.5), rounded to the storage precision, with ghosts set by `bc`.
HostGrid random_state(unsigned N, Boundary bc, Precision p, uint64_t seed);
// The analytic solution at time t, rounded to the storage precision, ghosts set by `bc`.
HostGrid exact_state(const HeatGeometry& g, double alpha, double t, Precision p);
// Along one axis, the state cell whose value the face ghost 0 (low) or N-1 (high) takes:
// Neumann mirrors cell 1 or N-2, periodic takes the far side's N-2 or 1 (not for Dirichlet).
// The reference and stage 09's kernel (hence __host__ __device__ under nvcc) share this rule.
#ifdef __CUDACC__
__host__ __device__
#endif
inline unsigned face_ghost_source(bool low, unsigned N, Boundary bc) {
    if (bc == Boundary::Neumann) return low ? 1 : N - 2;
    return low ? N - 2 : 1;
}
// Sets the face ghosts from the state cells (Neumann: mirror; periodic: far side); Dirichlet: nothing.
void fill_ghosts(HostGrid& u, unsigned N, Boundary bc);

// One step of the float64 reference: each state cell becomes u + r·(sum of the six neighbours
// - 6u) + source (source may be null: the heat equation has none; Jacobi's is -h²f/6), rounded
// to the storage precision; then the face ghosts follow `bc`. Edge and corner ghosts are copied.
void reference_step(const HostGrid& in, HostGrid& out, unsigned N, Boundary bc, double r, const HostGrid* source,
                    Precision p);

// Sum over the state cells: the total heat, which Neumann and periodic boundaries conserve.
double total_heat(const HostGrid& u, unsigned N);
// max |u - exact| / max |exact| over the state cells; exact(i, j, k) gives the exact value.
double max_relative_error(const HostGrid& u, unsigned N, const std::function<double(unsigned, unsigned, unsigned)>& exact);
// The same against the analytic solution of the heat equation at time t.
double error_against_exact(const HostGrid& u, const HeatGeometry& g, double alpha, double t);

// The Poisson problem that Jacobi solves (Dirichlet, on the geometry's points): ∇²u = f with
// f = -3π²·sin(πx)sin(πy)sin(πz), whose solution is sin(πx)sin(πy)sin(πz).
double poisson_solution(const HeatGeometry& g, unsigned i, unsigned j, unsigned k);

// Temporal blocking (stage 08): `steps` steps as passes that fuse S steps each, then the rest one
// step at a time. Each pass or single step writes the other buffer, so the result is in the
// second buffer when their count is odd.
struct FusedSchedule {
    unsigned passes = 0, single_steps = 0;
    bool result_in_second() const { return (passes + single_steps) % 2 == 1; }
};
FusedSchedule fused_schedule(unsigned steps, unsigned S);

// The tiles of a pass that fuses S steps. A block reads read_j × read_k cells (what it writes and
// its halo) of each of its planes and of S planes more on each side (to start and finish the
// levels), and writes write_j × write_k cells of each of its `planes` planes; planes = 0: every
// block streams all the planes, and reads no more than those.
struct FusedTile {
    unsigned read_j = 0, read_k = 0, write_j = 0, write_k = 0, planes = 0;
};

// DRAM bytes per cell-update of such a pass, if every cell a block reads comes from DRAM: the
// bytes read and written per written cell, over the S updates of each. Without a halo it is
// 2·bytes/S; the halo adds the share of the cells that neighbouring tiles read twice (or more).
double fused_bytes_per_update(const FusedTile& tile, unsigned S, size_t cell_bytes);
