#include "kernels/cpu/gemm_plan.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/short_product.hpp"

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
  a_stored_bf16_ = a.dtype == POCK_BF16;
  b_stored_bf16_ = b.dtype == POCK_BF16;
  if ((a_stored_bf16_ || b_stored_bf16_) && !bf16) return Status(Code::kInvalidArgument, "bf16 operands need compute \"bf16\"");
  short_ = !bf16 && !transpose_b && !bias && a_offsets.size() == 1 && k > 0 && k <= kShortProductMaxDepth &&
           n >= kShortPixels && ldb == n;
  if (!bf16 || m == 0 || n == 0 || k == 0) return Status::ok();
  scope_ = &scope;
  a_elems_ = numel(a);
  b_elems_ = numel(b);
  if (b_stored_bf16_) b_use = Bf16WeightUse::kConvert;  // nothing to convert: no copy either
  if (bf16_isa() == Bf16Isa::kAvx512Bf16) {
    Bf16GemmShape s{m, n, k, transpose_a, transpose_b, lda, ldb, bias};
    POCK_ASSIGN_OR_RETURN(dnnl_, DnnlBf16Gemm::create(s, num_threads));
    if (b_use != Bf16WeightUse::kConvert) {
      POCK_ASSIGN_OR_RETURN(b_copy_, shared_bf16_copy(scope, b, b_use));
    }
    // a's bf16 values, then b's where b has no copy to read; none for a bf16 tensor.
    const size_t a_bytes = a_stored_bf16_ ? 0 : static_cast<size_t>(a_elems_) * sizeof(uint16_t);
    b_scratch_offset_ = round_up_64(a_bytes);
    const bool b_converted = !b_stored_bf16_ && (b_use == Bf16WeightUse::kConvert || b_use == Bf16WeightUse::kKept);
    const size_t b_bytes = b_converted ? static_cast<size_t>(b_elems_) * sizeof(uint16_t) : 0;
    if (b_scratch_offset_ + b_bytes == 0) return Status::ok();
    return scope.reserve_scratch(b_scratch_offset_ + b_bytes, "bf16 GEMM operands");
  }
  // The f32 fallback: both operands rounded (or, stored as bf16, widened) into the scratch region
  // on every run.
  b_scratch_offset_ = round_up_64(static_cast<size_t>(a_elems_) * sizeof(float));
  return scope.reserve_scratch(b_scratch_offset_ + static_cast<size_t>(b_elems_) * sizeof(float), "bf16 GEMM operands");
}

Status GemmPlan::run_dnnl(const void* a, const void* b, const float* bias_values, float* y) const {
  uint8_t* scratch = scope_->scratch();
  const uint16_t* a16 = static_cast<const uint16_t*>(a);
  if (!a_stored_bf16_) {
    auto* converted = reinterpret_cast<uint16_t*>(scratch);
    convert_to_bf16(static_cast<const float*>(a), a_elems_, converted);
    a16 = converted;
  }
  const uint16_t* b16 = nullptr;
  const auto* b32 = static_cast<const float*>(b);
  switch (b_use) {
    case Bf16WeightUse::kFrozen: b16 = b_copy_->values.data(); break;
    case Bf16WeightUse::kKeep:
      convert_to_bf16(b32, b_elems_, b_copy_->values.data());
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
      if (b_stored_bf16_) {
        b16 = static_cast<const uint16_t*>(b);
        break;
      }
      auto* b_scratch = reinterpret_cast<uint16_t*>(scratch + b_scratch_offset_);
      convert_to_bf16(b32, b_elems_, b_scratch);
      b16 = b_scratch;
      break;
    }
  }
  return dnnl_->run(a16, b16, bias_values, y, a_offsets, b_offsets);
}

namespace {

// An operand's bf16 values as f32, for the f32 fallback: rounded from f32, or widened from bf16.
void bf16_values_as_f32(const void* in, bool stored_bf16, int64_t n, float* out) {
  if (stored_bf16) widen_bf16(static_cast<const uint16_t*>(in), n, out);
  else round_to_bf16(static_cast<const float*>(in), n, out);
}

}  // namespace

Status GemmPlan::run(const void* a_in, const void* b_in, const float* bias_values, float* y) const {
  if (m == 0 || n == 0) return Status::ok();
  const int64_t block = m * n, blocks = static_cast<int64_t>(a_offsets.size());
  const bool add_bias = bias && bias_values;
  if (dnnl_) {
    POCK_RETURN_IF_ERROR(run_dnnl(a_in, b_in, add_bias ? bias_values : nullptr, y));
    apply_activation_inplace(activation, y, block * blocks);
    return Status::ok();
  }
  const auto* a = static_cast<const float*>(a_in);
  const auto* b = static_cast<const float*>(b_in);
  if (bf16 && k > 0) {
    auto* a_rounded = reinterpret_cast<float*>(scope_->scratch());
    auto* b_rounded = reinterpret_cast<float*>(scope_->scratch() + b_scratch_offset_);
    bf16_values_as_f32(a_in, a_stored_bf16_, a_elems_, a_rounded);
    bf16_values_as_f32(b_in, b_stored_bf16_, b_elems_, b_rounded);
    a = a_rounded;
    b = b_rounded;
  }
  if (short_) {
    // A short reduction (a small batch's weight gradient, K = the batch): the direct tiles of
    // short_product.hpp, which write each output once instead of sgemm's packing and read-back.
    ShortProduct p = transpose_a ? short_product_in_place(a, 1, lda) : short_product_in_place(a, lda, 1);
    const Clamp clamp = clamp_of(activation);
    p.lo = clamp.lo;
    p.hi = clamp.hi;
    p.in = b;
    p.out = y;
    p.rows = m;
    p.depth = k;
    p.plane = n;
    run_short_product(p, pool_);
    return Status::ok();
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
