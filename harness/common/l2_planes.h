#pragma once
// How many planes along i a thread of a streaming kernel (stages 06, 07) takes, so that the
// planes two neighbouring chunks share are still in the L2 when the second chunk reads them.
#include <cstddef>

#include "common/device_attribute.h"

// The current GPU's L2 cache in bytes.
inline size_t l2_cache_bytes() { return size_t(device_attribute<cudaDevAttrL2CacheSize>()); }

// Blocks start chunk by chunk along i (blockIdx.z varies slowest), so the next chunk's blocks read
// a chunk's last planes again after about one chunk of traffic: `planes` planes of N² cells read
// and as many written. Once that outgrows half the L2 (floats in chunks of 4: N > 905 on an
// H100), those planes would come from DRAM twice; `fewer_planes` keeps them in the L2.
inline unsigned planes_per_thread(unsigned N, size_t cell_bytes, unsigned planes, unsigned fewer_planes) {
    const size_t chunk_bytes = size_t(planes) * N * N * 2 * cell_bytes;
    return chunk_bytes <= l2_cache_bytes() / 2 ? planes : fewer_planes;
}
