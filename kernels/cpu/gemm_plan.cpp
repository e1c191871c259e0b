#include "kernels/cpu/gemm_plan.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"

namespace pock::cpu {
namespace {

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

GemmPlan::~GemmPlan() {
  if (b_copy_ && b_use == Bf16WeightUse::kKeep) --b_copy_->keepers;
}

Status GemmPlan::prepare(const pock_tensor_desc& a, const pock_tensor_desc& b, KernelScope& scope, int32_t num_threads) {
  configure_blas_threads(num_threads);
  pool_ = thread_pool_for(num_threads);
  if (!bf16 || m == 0 || n == 0 || k == 0) return Status::ok();
  scope_ = &scope;
  a_elems_ = numel(a);
  b_elems_ = numel(b);
  if (bf16_isa() == Bf16Isa::kAvx512Bf16) {
    Bf16GemmShape s{m, n, k, transpose_a, transpose_b, lda, ldb, bias};
    POCK_ASSIGN_OR_RETURN(dnnl_, DnnlBf16Gemm::create(s, num_threads));
    if (b_use != Bf16WeightUse::kConvert) {
      POCK_ASSIGN_OR_RETURN(b_copy_, shared_bf16_copy(scope, b, b_use));
    }
    // a's bf16 values, then b's where b has no copy to read.
    b_scratch_offset_ = round_up_64(static_cast<size_t>(a_elems_) * sizeof(uint16_t));
    const size_t b_bytes = b_use == Bf16WeightUse::kConvert || b_use == Bf16WeightUse::kKept
                               ? static_cast<size_t>(b_elems_) * sizeof(uint16_t) : 0;
    return scope.reserve_scratch(b_scratch_offset_ + b_bytes, "bf16 GEMM operands");
  }
  // The f32 fallback: both operands rounded into the scratch region on every run.
  b_scratch_offset_ = round_up_64(static_cast<size_t>(a_elems_) * sizeof(float));
  return scope.reserve_scratch(b_scratch_offset_ + static_cast<size_t>(b_elems_) * sizeof(float), "bf16 GEMM operands");
}

Status GemmPlan::run_dnnl(const float* a, const float* b, const float* bias_values, float* y) const {
  uint8_t* scratch = scope_->scratch();
  auto* a16 = reinterpret_cast<uint16_t*>(scratch);
  convert_to_bf16(a, a_elems_, a16);
  const uint16_t* b16 = nullptr;
  switch (b_use) {
    case Bf16WeightUse::kFrozen: b16 = b_copy_->values.data(); break;
    case Bf16WeightUse::kKeep:
      convert_to_bf16(b, b_elems_, b_copy_->values.data());
      b16 = b_copy_->values.data();
      break;
    case Bf16WeightUse::kKept:
      // No forward over this weight on this backend instance (it ran elsewhere): convert here.
      if (b_copy_->keepers > 0) {
        b16 = b_copy_->values.data();
        break;
      }
      [[fallthrough]];
    case Bf16WeightUse::kConvert: {
      auto* b_scratch = reinterpret_cast<uint16_t*>(scratch + b_scratch_offset_);
      convert_to_bf16(b, b_elems_, b_scratch);
      b16 = b_scratch;
      break;
    }
  }
  return dnnl_->run(a16, b16, bias_values, y, a_offsets, b_offsets);
}

Status GemmPlan::run(const float* a, const float* b, const float* bias_values, float* y) const {
  if (m == 0 || n == 0) return Status::ok();
  const int64_t block = m * n, blocks = static_cast<int64_t>(a_offsets.size());
  const bool add_bias = bias && bias_values;
  if (dnnl_) {
    POCK_RETURN_IF_ERROR(run_dnnl(a, b, add_bias ? bias_values : nullptr, y));
    apply_activation_inplace(activation, y, block * blocks);
    return Status::ok();
  }
  if (bf16 && k > 0) {
    auto* a_rounded = reinterpret_cast<float*>(scope_->scratch());
    auto* b_rounded = reinterpret_cast<float*>(scope_->scratch() + b_scratch_offset_);
    round_to_bf16(a, a_elems_, a_rounded);
    round_to_bf16(b, b_elems_, b_rounded);
    a = a_rounded;
    b = b_rounded;
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
    parallel_sgemm_batch(pool_, blocks, [&](int64_t i) {
      return SgemmCall{transpose_a, transpose_b, m, n, k, 1.0f, a + a_offsets[static_cast<size_t>(i)], lda,
                       b + b_offsets[static_cast<size_t>(i)], ldb, beta, y + i * block, n};
    });
  }
  apply_activation_inplace(activation, y, block * blocks);
  return Status::ok();
}

}  // namespace pock::cpu
#endif
