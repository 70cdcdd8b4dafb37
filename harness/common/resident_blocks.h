#pragma once
// How many blocks of a kernel fit on an SM of the current GPU, at a block size and dynamic shared
// memory: asked of the runtime once for each, since launchers that size their grids by it ask at
// every launch (the report's occupancy asks too).
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>

#include "common/cuda_check.h"

inline int resident_blocks(const void* kernel, unsigned threads_per_block, size_t dynamic_shared_bytes) {
    static std::mutex mutex;
    static std::map<std::tuple<int, const void*, unsigned, size_t>, int> known;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    const std::lock_guard<std::mutex> lock(mutex);
    const auto [at, added] = known.try_emplace({device, kernel, threads_per_block, dynamic_shared_bytes}, 0);
    if (added)
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&at->second, kernel, int(threads_per_block),
                                                                 dynamic_shared_bytes));
    return at->second;
}
