#pragma once
// Every CUDA call in the harness goes through CUDA_CHECK: a failure becomes an exception that
// names the call, where it was made and CUDA's message.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess)
        throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                        cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
