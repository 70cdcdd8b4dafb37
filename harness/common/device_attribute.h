#pragma once
// An attribute of the current GPU, asked once (the launchers' host code: the L2's size, the SMs).
#include "common/cuda_check.h"

template <cudaDeviceAttr Attribute>
int device_attribute() {
    static const int value = [] {
        int device = 0, v = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&v, Attribute, device));
        return v;
    }();
    return value;
}

inline unsigned sm_count() { return unsigned(device_attribute<cudaDevAttrMultiProcessorCount>()); }
