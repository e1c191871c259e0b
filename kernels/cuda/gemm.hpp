// Row-major GEMMs on cuBLAS for the linalg and linear_grad families:
//   C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C,   op = transpose when asked,
// batched over matrices at fixed strides (stride 0 repeats one matrix) or at listed offsets.
// Inputs are f32, f16 or bf16 (C has A's dtype); accumulation is always f32. f32 inputs use exact
// f32 products unless the op computes in bf16 (recipe precision "bf16", attribute compute "bf16")
// or TF32 is allowed (gemm_allows_tf32): see GemmMath.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/gemm_layout.hpp"
#include "kernels/params/linalg.hpp"
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

// How an f32 GEMM multiplies (f16 and bf16 inputs always multiply as stored, summing in f32):
//   kExact: f32 products (ref's default);
//   kTf32:  operands rounded to TF32 on the tensor cores (POCK_CUDA_TF32=1);
//   kBf16:  operands rounded to bf16 on the tensor cores, products and sums in f32: what ref's
//           compute "bf16" means (kernels/bf16_round.h), with the weights staying f32 in memory.
enum class GemmMath { kExact, kTf32, kBf16 };

// The op's math: compute "bf16" wins over POCK_CUDA_TF32, since the recipe asked for it.
GemmMath gemm_math(const params::MatMulParams& p);

// Whether cuda runs the GEMM as its attributes ask: compute "bf16" only on f32 or bf16 operands
// (ref rounds f16 operands to bf16, which no cuBLAS mode does).
bool gemm_attributes_supported(const pock_op_desc& op);

// Runs on the current instance's cuBLAS handle and stream. `what` names the op for messages.
Status gemm(pock_dtype dtype, const GemmShape& s, float alpha, const void* a, const void* b, float beta, void* c,
            const GemmBatch& batch, GemmMath math, const std::string& what);

// Whether cuBLAS (32-bit int dimensions) can take the shape.
bool gemm_fits(const GemmShape& s, int64_t batch);

}  // namespace pock::cuda
