// The time-stepping runner's shared part (heat/runner.h): grids to and from the GPU in any storage
// precision, the memory check, the stage's steps run and checked, and the options a stage refuses.
// heat/main.cu (stages 07-08) and slab/ (stage 09) use it; the stage file linked beside it
// defines run_steps (heat/stage.h).
#include "heat/runner.h"

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cuda_check.h"
#include "common/grid.h"
#include "common/program.h"
#include "heat/cells.cuh"

// ---------------------------------------------------------------- grids on the GPU

// The bytes of u in the storage precision (every value of u is one the precision holds).
std::vector<unsigned char> encode(const HostGrid& u, Precision p) {
    std::vector<unsigned char> bytes(u.size() * bytes_per_cell(p));
    with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        T* out = reinterpret_cast<T*>(bytes.data());
        for (size_t c = 0; c < u.size(); ++c) {
            if constexpr (std::is_same_v<T, double>) out[c] = u[c];
            else out[c] = T(float(u[c]));  // exact: u holds values of T
        }
        return 0;
    });
    return bytes;
}

HostGrid decode(const std::vector<unsigned char>& bytes, Precision p) {
    HostGrid u(bytes.size() / bytes_per_cell(p));
    with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        const T* in = reinterpret_cast<const T*>(bytes.data());
        for (size_t c = 0; c < u.size(); ++c) {
            if constexpr (std::is_same_v<T, double>) u[c] = in[c];
            else u[c] = double(static_cast<float>(in[c]));
        }
        return 0;
    });
    return u;
}

void upload(const HostGrid& u, void* device, Precision p) {
    std::vector<unsigned char> bytes = encode(u, p);
    CUDA_CHECK(cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
}

HostGrid download(const void* device, size_t cells, Precision p) {
    std::vector<unsigned char> bytes(cells * bytes_per_cell(p));
    CUDA_CHECK(cudaMemcpy(bytes.data(), device, bytes.size(), cudaMemcpyDeviceToHost));
    return decode(bytes, p);
}

template <class T>
__global__ void fill_random_kernel(T* grid, size_t cells, uint64_t seed) {
    for (size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x; c < cells; c += size_t(gridDim.x) * blockDim.x)
        grid[c] = from_arith<T>(Arith<T>(random_value(seed, c)));
}

void fill_random_on_gpu(void* device, size_t cells, Precision p, uint64_t seed, int blocks, cudaStream_t s) {
    with_storage_type(p, [&](auto t) {
        using T = decltype(t);
        fill_random_kernel<T><<<blocks, 256, 0, s>>>(static_cast<T*>(device), cells, seed);
        return 0;
    });
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(s));
}

// The state cells NaN, the ghosts kept: a state cell that no step writes stays NaN.
HostGrid poisoned(HostGrid u, unsigned N) {
    for (unsigned i = 1; i + 1 < N; ++i)
        for (unsigned j = 1; j + 1 < N; ++j)
            for (unsigned k = 1; k + 1 < N; ++k) u[grid_index(N, i, j, k)] = NAN;
    return u;
}

void require_memory(unsigned N, size_t grids, Precision p, size_t flush_bytes) {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    double grid = double(grid_cells(N)) * bytes_per_cell(p), need = grids * grid + double(flush_bytes);
    if (need > double(free_bytes))
        throw MemoryShortage("N = " + std::to_string(N) + " in " + precision_name(p) + " needs " + gigabytes(need) +
                             " of GPU memory (" + std::to_string(grids) + " grids of " + gigabytes(grid) +
                             " and a cache-flush buffer), but the GPU has only " + gigabytes(double(free_bytes)) +
                             " free of " + gigabytes(double(total_bytes)));
}

// ---------------------------------------------------------------- the stage's steps

// `steps` steps from the state in a (b the other buffer); returns the buffer holding the result.
void* advance(void* a, void* b, unsigned N, const HeatStep& step, unsigned steps, cudaStream_t s) {
    void* result = nullptr;
    CUDA_CHECK(run_steps(a, b, N, step, steps, s, &result));
    if (result != a && result != b)
        throw CudaError("run_steps returned a result pointer that is neither of the two grids");
    return result;
}

// ---------------------------------------------------------------- the options a stage refuses

// "" or why the stage `info` describes does not run what the options ask for.
std::string stage_refuses(const HeatOptions& h, const HeatStageInfo& info) {
    const std::string stage = std::string("stage ") + info.id;
    if (h.fused_steps > info.max_fused_steps) {
        if (info.max_fused_steps == 1)
            return "--fuse " + std::to_string(h.fused_steps) + ": " + stage + " advances one step per pass through "
                   "memory; fusing steps is stage 08 (temporal blocking)";
        return "--fuse " + std::to_string(h.fused_steps) + ": " + stage + " fuses at most " +
               std::to_string(info.max_fused_steps) + " steps per pass";
    }
    return "";
}
