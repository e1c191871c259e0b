// Element-wise steps around a GEMM: a bias broadcast into the output before it (the GEMM then
// adds its product with beta = 1, so y = x wᵀ + b is rounded once, as ref does), and the fused
// activation after it. Values go through f32 whatever the storage type.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ir/activation.hpp"
#include "kernels/cuda/launch.cuh"

namespace pock::cuda {

__device__ __forceinline__ float load_f32(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load_f32(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float load_f32(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store_f32(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store_f32(__half* p, int64_t i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void store_f32(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16(v); }

// y[r, j] = bias[j] for every row r of y [rows, n].
template <typename T>
struct FillRowsWithBias {
  const T* bias;
  T* y;
  int64_t n;
  __device__ void operator()(int64_t i) const { y[i] = bias[i % n]; }
};

// Same expressions as apply_activation (ir/activation.hpp): NaN passes through.
template <typename T>
struct ApplyActivation {
  T* y;
  Activation activation;
  __device__ void operator()(int64_t i) const {
    const float v = load_f32(y, i);
    const float r = activation == Activation::kRelu ? (v < 0.0f ? 0.0f : v) : (v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v));
    store_f32(y, i, r);
  }
};

}  // namespace pock::cuda
