#include "kernels/cpu/gemm_plan.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/blas.hpp"

namespace pock::cpu {

Status GemmPlan::prepare(int64_t a_elems, int64_t b_elems, int32_t num_threads) {
  configure_blas_threads(num_threads);
  if (!bf16 || m == 0 || n == 0 || k == 0) return Status::ok();
  if (bf16_isa() == Bf16Isa::kAvx512Bf16) {
    Bf16GemmShape s{m, n, k, transpose_a, transpose_b, lda, ldb, a_elems, b_elems, bias};
    POCK_ASSIGN_OR_RETURN(dnnl_, DnnlBf16Gemm::create(s, num_threads));
    return Status::ok();
  }
  try {
    a_rounded_.resize(static_cast<size_t>(a_elems));
    b_rounded_.resize(static_cast<size_t>(b_elems));
  } catch (const std::bad_alloc&) {
    return Status(Code::kOutOfMemory, "bf16 GEMM: the rounded operands");
  }
  return Status::ok();
}

Status GemmPlan::run(const float* a, const float* b, const float* bias_values, float* y) const {
  if (m == 0 || n == 0) return Status::ok();
  const int64_t block = m * n, blocks = static_cast<int64_t>(a_offsets.size());
  const bool add_bias = bias && bias_values;
  if (dnnl_) {
    POCK_RETURN_IF_ERROR(dnnl_->run(a, b, add_bias ? bias_values : nullptr, y, a_offsets, b_offsets));
    apply_activation_inplace(activation, y, block * blocks);
    return Status::ok();
  }
  if (bf16 && k > 0) {
    round_to_bf16(a, static_cast<int64_t>(a_rounded_.size()), a_rounded_.data());
    round_to_bf16(b, static_cast<int64_t>(b_rounded_.size()), b_rounded_.data());
    a = a_rounded_.data();
    b = b_rounded_.data();
  }
  // With a bias every row starts from it and sgemm accumulates onto it (beta = 1); K = 0 leaves
  // only the start.
  if (add_bias || k == 0) {
    for (int64_t r = 0; r < block * blocks; r += n) {
      if (add_bias) std::copy(bias_values, bias_values + n, y + r);
      else std::fill(y + r, y + r + n, 0.0f);
    }
  }
  const float beta = add_bias ? 1.0f : 0.0f;
  if (k > 0) {
    for (int64_t i = 0; i < blocks; ++i) {
      cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
                  static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a + a_offsets[i],
                  static_cast<int>(lda), b + b_offsets[i], static_cast<int>(ldb), beta, y + i * block,
                  static_cast<int>(n));
    }
  }
  apply_activation_inplace(activation, y, block * blocks);
  return Status::ok();
}

}  // namespace pock::cpu
#endif
