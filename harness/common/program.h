#pragma once
// Host-side helpers shared by every runner (sweep/, fd1d/, heat/, slab/).
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/exercise.h"

// Exit codes of every stage program (see usage() in cli.cpp).
enum Exit { kPass = 0, kFail = 1, kUsage = 2, kNoGpu = 3, kSkip = 77 };

// The name a program's messages begin with: its file name (stage_02_basic_sweep_exercise), not
// the build folder's path to it.
inline std::string program_name(const char* argv0) {
    std::string path = argv0;
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline std::string gigabytes(double bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GB (%.0f bytes)", bytes * 1e-9, bytes);
    return buf;
}

struct Gpu {
    int id = 0;
    cudaDeviceProp prop{};
};

// False, with the reason in `why`, when there is no usable GPU.
inline bool open_gpu(Gpu& g, std::string& why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        why = "no CUDA GPU is available (";
        if (e == cudaErrorInsufficientDriver)
            why += "no NVIDIA driver is loaded, or it is older than this CUDA runtime needs";
        else
            why += e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices";
        why += ")";
        return false;
    }
    CUDA_CHECK(cudaGetDevice(&g.id));
    CUDA_CHECK(cudaGetDeviceProperties(&g.prop, g.id));
    return true;
}

// Device memory that frees itself.
struct DeviceBuffer {
    void* ptr = nullptr;
    explicit DeviceBuffer(size_t bytes) { CUDA_CHECK(cudaMalloc(&ptr, bytes)); }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    float* floats() const { return static_cast<float*>(ptr); }
};

// A grid that does not fit in the GPU's free memory; the message says how many bytes it needs.
struct MemoryShortage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Runs `body` (which returns an exit code) and turns the harness's exceptions into a message
// and an exit code: a grid too large for the GPU, a CUDA error, too little host memory.
template <class Body>
int run_reporting_errors(Body body, bool as_test, const std::string& program, const char* host_memory_need) {
    try {
        return body();
    } catch (const MemoryShortage& e) {
        std::printf("%s%s\n", as_test ? "SKIP: " : "", e.what());
        return as_test ? kSkip : kNoGpu;
    } catch (const CudaError& e) {
        // A refused launch is a mistake in the launcher, not in the kernel: say which numbers to check.
        if (std::strstr(e.what(), "cudaErrorInvalidConfiguration"))
            std::printf("CUDA error: %s\nthe kernel launch was refused: a grid or block dimension is zero or too "
                        "large (check the ceil_div for the number of blocks, and the block shape against the "
                        "device's limits: 1024 threads per block, block z at most 64, grid y and z at most "
                        "65535)\n",
                        e.what());
        else
            std::printf("CUDA error: %s\n(a kernel that reads or writes out of bounds often ends like this: run it "
                        "under 'compute-sanitizer build/%s --n 17 --check-only' to see where)\n",
                        e.what(), program.c_str());
        return kFail;
    } catch (const std::bad_alloc&) {
        std::printf("not enough host memory: %s\n", host_memory_need);
        return kNoGpu;
    }
}

// Where an untouched exercise sends the learner.
inline int report_not_attempted(const char* stage_id) {
    std::printf("SKIP: exercise %s is not attempted yet. Read chapters/%s/README.md, fill in the EXERCISE regions "
                "of %s, then delete the line '#define I_AM_NOT_DONE' near its top.\n",
                stage_id, stage_id, kStageSource);
    return kSkip;
}

using JsonLog = std::unique_ptr<FILE, int (*)(FILE*)>;
// The file that --json appends records to (none for an empty path); false with a message if it
// cannot be opened.
inline bool open_json_log(const std::string& path, const std::string& program, JsonLog& log) {
    if (path.empty()) return true;
    log.reset(std::fopen(path.c_str(), "a"));
    if (!log)
        std::fprintf(stderr, "%s: cannot open '%s' for writing: %s\n", program.c_str(), path.c_str(),
                     std::strerror(errno));
    return bool(log);
}
