// One row-major GEMM as the cpu backend's MatMul, Linear and Linear gradients plan it at prepare
// and run it each step: OpenBLAS sgemm in f32 (one product whose reduction is at most
// kShortProductMaxDepth long, such as a small batch's weight gradient: short_product.hpp's
// direct tiles), or, with compute "bf16", bf16 operands and f32 sums (kernels/cpu/bf16_gemm.hpp).
// Everything shape-dependent is worked out at prepare.
// The bf16 operands live in the engine's scratch region (one for all ops: they run one at a
// time), except an operand that is a bf16 tensor already (the compiler's one copy of an
// activation, src/compiler/lowering/bf16_operands.hpp), read as it is, and a weight operand b
// with a shared bf16 copy (kernels/cpu/bf16_weight_copy.hpp).
#pragma once
#ifdef POCK_HAVE_OPENBLAS
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/activation.hpp"
#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/bf16_weight_copy.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "pock/status.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cpu {

// Whether a GEMM reads `t` as a matrix operand: f32, or bf16 with compute "bf16".
inline bool is_gemm_operand(const pock_tensor_desc& t, bool bf16) {
  return t.dtype == POCK_F32 || (bf16 && t.dtype == POCK_BF16);
}

// y[M, N] = op(a) op(b) (+ bias[N] on every row), repeated over pairs of offsets into a and b:
// the i-th pair writes the i-th [M, N] block of y.
struct GemmPlan {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  int64_t lda = 1, ldb = 1;
  std::vector<int64_t> a_offsets, b_offsets;  // in floats; {0}, {0} for one product
  Activation activation = Activation::kNone;        // Linear's fused epilogue
  bool bias = false;
  bool bf16 = false;  // compute "bf16"
  Bf16WeightUse b_use = Bf16WeightUse::kConvert;  // with bf16: where b's bf16 operand comes from

  GemmPlan() = default;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan();

  // Call once the fields above are set. a and b: the operands as the op binds them, f32, or bf16
  // with compute "bf16" (with bf16, all of an f32 operand is converted once per run, not per
  // block; b_use other than kConvert names b's copy). Threads: num_threads of the op.
  Status prepare(const pock_tensor_desc& a, const pock_tensor_desc& b, KernelScope& scope, int32_t num_threads);
  // a and b hold the dtypes prepare saw.
  Status run(const void* a, const void* b, const float* bias_values, float* y) const;

 private:
  Status run_dnnl(const void* a, const void* b, const float* bias_values, float* y) const;

  KernelScope* scope_ = nullptr;
  pthreadpool_t pool_ = nullptr;  // f32 products split over it
  bool short_ = false;  // f32, one product, K <= kShortProductMaxDepth: the direct tiles (short_product.hpp)
  int64_t a_elems_ = 0, b_elems_ = 0;
  bool a_stored_bf16_ = false, b_stored_bf16_ = false;  // operands that are bf16 tensors
  size_t b_scratch_offset_ = 0;                  // bytes into the scratch region
  std::unique_ptr<DnnlBf16Gemm> dnnl_;           // bf16 on Bf16Isa::kAvx512Bf16
  std::shared_ptr<Bf16WeightCopy> b_copy_;       // b_use other than kConvert, on kAvx512Bf16
};

}  // namespace pock::cpu
#endif
