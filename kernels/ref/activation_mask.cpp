// Reference kernels of the activation_mask family. The comparisons are ref's ReluGrad, Relu6Grad
// and ClipGrad derivatives (kernels/ref/elementwise_grad.cpp) split in two: ClipMask records
// f'(v) != 0 in the forward pass, MaskGrad multiplies dy by it in the backward, so that the pair
// computes bit for bit what the fused gradient op computes — NaN and infinity included (a NaN v
// is outside every range; dy * 0 keeps a NaN or infinite dy NaN, as dy * f'(v) does).
#include <limits>

#include "kernels/params/elementwise.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// An absent bound tests nothing (Relu's output has no upper bound: an infinite y is inside, as
// ReluGrad's x > 0 says); it is written as an inclusive infinite bound, which only NaN fails.
Status clip_mask(const KernelCall& c, const params::ActivationParams& p) {
  const bool lo_strict = !p.inclusive && p.has_lo;
  const bool hi_strict = !p.inclusive && p.has_hi;
  const double lo = p.lo, hi = p.hi;
  const float* v = c.in_data<float>(0);
  uint8_t* mask = c.out_data<uint8_t>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) {
    const double x = v[i];
    const bool above = lo_strict ? x > lo : x >= lo;
    const bool below = hi_strict ? x < hi : x <= hi;
    mask[i] = above && below ? 1 : 0;
  }
  return Status::ok();
}

Status mask_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const uint8_t* mask = c.in_data<uint8_t>(1);
  float* dx = c.out_data<float>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) dx[i] = static_cast<float>(dy[i] * (mask[i] ? 1.0 : 0.0));
  return Status::ok();
}

}  // namespace

void register_ref_activation_mask(KernelTable& t) {
  t.add(typed_kernel<params::ActivationParams, clip_mask>("ClipMask", DType::kF32));
  t.add({"MaskGrad", DType::kF32, mask_grad});
}

}  // namespace pock
