#pragma once
// Cells in any storage precision, as the time-stepping stages (07 onward) read and write them:
// stored as float, double, half or bf16; computed in double for double storage, float otherwise.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

#include "heat/heat.h"

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

// W neighbouring cells along k, held in the arithmetic type.
template <class T, int W> struct Cells {
    Arith<T> v[W];
};

// An unsigned type of `bytes` bytes, for one wide access: 4, 8 or 16 (uint4).
template <int bytes> struct Raw;
template <> struct Raw<4> { using type = unsigned int; };
template <> struct Raw<8> { using type = uint2; };
template <> struct Raw<16> { using type = uint4; };
template <class T, int W> constexpr bool kOneAccess = W > 1 && (W * sizeof(T) == 4 || W * sizeof(T) == 8 || W * sizeof(T) == 16);

// W cells as they are stored, before they are widened to the arithmetic type: the raw bits of
// one wide access where there is one. A thread that keeps planes in registers keeps them like
// this, in half the registers for 2-byte types (W = 8 halves: 4 registers instead of 8).
template <class T, int W, bool = kOneAccess<T, W>> struct Stored {
    T v[W];
};
template <class T, int W> struct Stored<T, W, true> {
    typename Raw<W * sizeof(T)>::type bits;
};

// Loads cells p[0..W-1]: in one access of W·sizeof(T) bytes where that is 4, 8 or 16 bytes, so p
// must then be aligned to that size.
template <int W, class T> __device__ Stored<T, W> load_stored(const T* p) {
    Stored<T, W> s;
    if constexpr (kOneAccess<T, W>)
        s.bits = *reinterpret_cast<const decltype(s.bits)*>(p);
    else
        for (int e = 0; e < W; ++e) s.v[e] = p[e];
    return s;
}

template <class T, int W> __device__ Cells<T, W> widen(const Stored<T, W>& s) {
    Cells<T, W> c;
    if constexpr (kOneAccess<T, W>) {
        T t[W];
        memcpy(t, &s.bits, sizeof s.bits);
        for (int e = 0; e < W; ++e) c.v[e] = to_arith(t[e]);
    } else {
        for (int e = 0; e < W; ++e) c.v[e] = to_arith(s.v[e]);
    }
    return c;
}

template <int W, class T> __device__ Cells<T, W> load_cells(const T* p) { return widen(load_stored<W>(p)); }

// Stores all W cells, in one access where load_cells uses one.
template <int W, class T> __device__ void store_cells(T* p, const Cells<T, W>& c) {
    if constexpr (kOneAccess<T, W>) {
        using R = typename Raw<W * sizeof(T)>::type;
        T t[W];
        for (int e = 0; e < W; ++e) t[e] = from_arith<T>(c.v[e]);
        R raw;
        memcpy(&raw, t, sizeof raw);
        *reinterpret_cast<R*>(p) = raw;
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
