#pragma once
// Cells in any storage precision, as the time-stepping stages (07 onward) read and write them:
// stored as float, double, half or bf16; computed in double for double storage, float otherwise.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

#include "heat.h"

template <class T> struct ArithmeticOf { using type = float; };
template <> struct ArithmeticOf<double> { using type = double; };
template <class T> using Arith = typename ArithmeticOf<T>::type;

__device__ inline float to_arith(float x) { return x; }
__device__ inline double to_arith(double x) { return x; }
__device__ inline float to_arith(__half x) { return __half2float(x); }
__device__ inline float to_arith(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T> __device__ T from_arith(Arith<T> x);  // rounds to nearest, ties to even
template <> __device__ inline float from_arith<float>(float x) { return x; }
template <> __device__ inline double from_arith<double>(double x) { return x; }
template <> __device__ inline __half from_arith<__half>(float x) { return __float2half_rn(x); }
template <> __device__ inline __nv_bfloat16 from_arith<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// How many cells of T fill one 16-byte access: 4 floats, 2 doubles, 8 halves.
template <class T> constexpr int kWide = 16 / sizeof(T);

// W neighbouring cells along k, held in the arithmetic type.
template <class T, int W> struct Cells {
    Arith<T> v[W];
};

// Loads cells p[0..W-1]; for W = kWide<T> in one 16-byte access, so p must be 16-byte aligned.
template <int W, class T> __device__ Cells<T, W> load_cells(const T* p) {
    Cells<T, W> c;
    if constexpr (W * sizeof(T) == 16) {
        uint4 raw = *reinterpret_cast<const uint4*>(p);
        T t[W];
        memcpy(t, &raw, 16);
        for (int e = 0; e < W; ++e) c.v[e] = to_arith(t[e]);
    } else {
        for (int e = 0; e < W; ++e) c.v[e] = to_arith(p[e]);
    }
    return c;
}

// Stores all W cells (one 16-byte access where W = kWide<T>).
template <int W, class T> __device__ void store_cells(T* p, const Cells<T, W>& c) {
    if constexpr (W * sizeof(T) == 16) {
        T t[W];
        for (int e = 0; e < W; ++e) t[e] = from_arith<T>(c.v[e]);
        uint4 raw;
        memcpy(&raw, t, 16);
        *reinterpret_cast<uint4*>(p) = raw;
    } else {
        for (int e = 0; e < W; ++e) p[e] = from_arith<T>(c.v[e]);
    }
}

// Calls f(T{}) with T the storage type of p, and returns what it returns.
template <class F> auto with_storage_type(Precision p, F f) {
    switch (p) {
        case Precision::Double: return f(double{});
        case Precision::Half: return f(__half{});
        case Precision::BFloat16: return f(__nv_bfloat16{});
        case Precision::Float: break;
    }
    return f(float{});
}
