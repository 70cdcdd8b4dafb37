#pragma once
// The time-stepping runner's shared part (stages 07 onward): what heat/main.cu (stages 07-08) and
// a layer built on the runner (slab/, stage 09) need to move grids between the host and the GPU,
// to run a stage's steps, and to refuse options a stage does not run. heat/runner.cu defines it;
// the steps themselves come from the stage file linked beside it (heat/stage.h's run_steps).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "heat/cli.h"
#include "heat/heat.h"
#include "heat/stage.h"

// Cell-updates the CPU reference may do for one check (about a second on 16 cores); past that
// the check covers the first steps only, and says so.
constexpr double kCheckBudget = 2.2e9;

// ---------------------------------------------------------------- grids on the GPU

// The bytes of u in the storage precision (every value of u is one the precision holds).
std::vector<unsigned char> encode(const HostGrid& u, Precision p);
// The cells those bytes hold, as doubles.
HostGrid decode(const std::vector<unsigned char>& bytes, Precision p);
// u into `device` (a grid of u.size() cells in precision p), and back.
void upload(const HostGrid& u, void* device, Precision p);
HostGrid download(const void* device, size_t cells, Precision p);

// Every cell of a grid of `cells` cells in precision p uniform in [0.5, 1.5), made on the GPU
// (common/grid.h's random_value of the cell's index): a state to time the steps on, at any N,
// without the host.
void fill_random_on_gpu(void* device, size_t cells, Precision p, uint64_t seed, int blocks, cudaStream_t s);

// The state cells NaN, the ghosts kept: a state cell that no step writes stays NaN.
HostGrid poisoned(HostGrid u, unsigned N);

// Throws MemoryShortage (common/program.h), saying what is lacking, unless the GPU has room for
// `grids` grids of N³ cells in precision p and a cache-flush buffer of flush_bytes.
void require_memory(unsigned N, size_t grids, Precision p, size_t flush_bytes);

// ---------------------------------------------------------------- the stage's steps

// `steps` steps from the state in a (b the other buffer), by the stage's run_steps on stream s;
// returns the buffer holding the result. Throws CudaError on a failure.
void* advance(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s);

// "" or why the stage `info` describes does not run what the options ask for (--fuse).
std::string stage_refuses(const HeatOptions& h, const HeatStageInfo& info);
