#pragma once
// Timing and the resource report, shared by the GPU runners (sweep/main.cu, fd1d/main.cu, heat/main.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/cli.h"
#include "common/cuda_check.h"
#include "common/program.h"
#include "common/record.h"
#include "common/resident_blocks.h"

// The kernel's registers, shared memory and occupancy at this block shape.
inline Resources kernel_resources(const Gpu& g, const void* kernel, dim3 block, size_t dynamic_shared_bytes) {
    cudaFuncAttributes a{};
    CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
    Resources r;
    r.threads_per_block = block.x * block.y * block.z;
    r.shared_bytes = a.sharedSizeBytes + dynamic_shared_bytes;
    r.registers = a.numRegs;
    r.blocks_per_sm = resident_blocks(kernel, r.threads_per_block, dynamic_shared_bytes);
    r.occupancy = double(r.blocks_per_sm) * r.threads_per_block / g.prop.maxThreadsPerMultiProcessor;
    return r;
}

// A buffer twice the size of L2 (at least 8 MiB): writing it evicts the grids.
inline size_t l2_flush_bytes(const Gpu& g) { return std::max<size_t>(2 * size_t(g.prop.l2CacheSize), 1 << 23); }

// Median, min and max of `reps` timed runs of `work` after `warmup` untimed ones. Before each
// timed run, writing a buffer twice the size of L2 evicts the grids, so small grids are timed
// from DRAM like large ones.
template <class Work>
TimeStats time_runs(Work work, const Options& o, cudaStream_t s, const DeviceBuffer& flush, size_t flush_bytes) {
    for (int w = 0; w < o.warmup; ++w) work();
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int r = 0; r < o.reps; ++r) {
        CUDA_CHECK(cudaMemsetAsync(flush.ptr, r & 0xFF, flush_bytes, s));
        CUDA_CHECK(cudaEventRecord(start, s));
        work();
        CUDA_CHECK(cudaEventRecord(stop, s));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return summarize(times);
}

