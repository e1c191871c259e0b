// Row-major GEMMs on cuBLAS for the linalg and linear_grad families:
//   C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C,   op = transpose when asked,
// batched over matrices at fixed strides (stride 0 repeats one matrix) or at listed offsets.
// Inputs are f32, f16 or bf16 (C has A's dtype); accumulation is always f32, and f32 inputs use
// exact f32 products unless TF32 is allowed (gemm_allows_tf32).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/gemm_layout.hpp"
#include "pock/pock.h"
#include "pock/status.hpp"

namespace pock::cuda {

// One batch of a GEMM: element offsets (in elements, not bytes) of each A, B and C matrix.
struct GemmBatch {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // used when `pointers` is null
  // Device arrays of `count` pointers each (cublasGemmBatchedEx), for broadcasts that a fixed
  // stride cannot express; built once at prepare, since tensor addresses never change.
  const void* const* a_pointers = nullptr;
  const void* const* b_pointers = nullptr;
  void* const* c_pointers = nullptr;
};

// POCK_CUDA_TF32=1 lets f32 GEMMs round their inputs to TF32 (about 3 decimal digits) for the
// tensor cores' speed; read once per process. Default: exact f32, as ref.
bool gemm_allows_tf32();

// Runs on the current instance's cuBLAS handle and stream. `what` names the op for messages.
Status gemm(pock_dtype dtype, const GemmShape& s, float alpha, const void* a, const void* b, float beta, void* c,
            const GemmBatch& batch, bool tf32, const std::string& what);

// Whether cuBLAS (32-bit int dimensions) can take the shape.
bool gemm_fits(const GemmShape& s, int64_t batch);

}  // namespace pock::cuda
