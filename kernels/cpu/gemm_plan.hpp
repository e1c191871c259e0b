// One row-major GEMM as the cpu backend's MatMul, Linear and Linear gradients plan it at prepare
// and run it each step: OpenBLAS sgemm in f32, or, with compute "bf16", bf16 operands and f32
// sums (kernels/cpu/bf16_gemm.hpp). Everything shape-dependent is worked out at prepare.
#pragma once
#ifdef POCK_HAVE_OPENBLAS
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/activation.hpp"
#include "kernels/cpu/bf16_gemm.hpp"
#include "pock/status.hpp"

namespace pock::cpu {

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

  // Call once the fields above are set. a_elems and b_elems: the sizes of a and b (with bf16,
  // both are converted once per run, not per block). Threads: num_threads of the op.
  Status prepare(int64_t a_elems, int64_t b_elems, int32_t num_threads);
  Status run(const float* a, const float* b, const float* bias_values, float* y) const;

 private:
  std::unique_ptr<DnnlBf16Gemm> dnnl_;              // bf16 on Bf16Isa::kAvx512Bf16
  mutable std::vector<float> a_rounded_, b_rounded_;  // bf16 on Bf16Isa::kF32Fma: rounded operands
};

}  // namespace pock::cpu
#endif
