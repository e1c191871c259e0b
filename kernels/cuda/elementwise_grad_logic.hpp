// Per-element logic of the cuda elementwise_grad family: the derivatives of
// kernels/ref/elementwise_grad.cpp (PyTorch's conventions at the kinks) in f32, the two-output
// gradients of Maximum/Minimum/Pow, and the broadcasts of the reduction gradients.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/cuda/activation_mask_logic.hpp"
#include "kernels/cuda/float_map.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::cuda {

struct GradArgs {
  float alpha = 0.01f;  // LeakyReluGrad
  MaskBounds clip;      // ClipGrad: inclusive bounds that sort every f32 as ref's double ones do
  bool tanh_gelu = false;
};

inline GradArgs grad_args(const params::ActivationParams& p) {
  GradArgs a;
  a.alpha = static_cast<float>(p.alpha);
  a.clip = {f32_lower_bound(p.lo, false), f32_upper_bound(p.hi, false)};
  a.tanh_gelu = p.tanh_gelu;
  return a;
}

POCK_HD float gelu_derivative(float x, bool tanh_form) {
  if (tanh_form) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    const float t = tanhf(k * (x + 0.044715f * x * x * x));
    // Once tanh saturates the second term is 0 for any finite x (NaN for an infinite one, as in
    // ref's double); skipping it keeps x * x, which overflows f32 long before, out of the product.
    const float head = 0.5f * x * (1.0f - t * t);
    return 0.5f * (1.0f + t) + (head == 0.0f ? 0.0f : head * k * (1.0f + 3.0f * 0.044715f * x * x));
  }
  const float cdf = 0.5f * (1.0f + erff(x * 0.7071067811865476f));
  const float pdf = expf(-0.5f * x * x) * 0.3989422804014327f;  // 1 / sqrt(2 pi)
  return cdf + x * pdf;
}

POCK_HD float silu_derivative(float x) {
  const float s = 1.0f / (1.0f + expf(-x));
  return s * (1.0f + x * (1.0f - s));
}

POCK_HD float hardswish_derivative(float x) {
  if (x < -3.0f) return 0.0f;
  if (x <= 3.0f) return x / 3.0f + 0.5f;
  return 1.0f;
}

// dx = dy * f'(v), v being the forward input (the output y for SigmoidGrad and TanhGrad).
#define POCK_UNARY_GRAD(Name, derivative) \
  struct Name {                           \
    static POCK_HD float apply(float dy, float v, const GradArgs& a) { (void)a; return dy * (derivative); } \
  };
POCK_UNARY_GRAD(ReluGradOp, v > 0.0f ? 1.0f : 0.0f)
POCK_UNARY_GRAD(Relu6GradOp, v > 0.0f && v < 6.0f ? 1.0f : 0.0f)
POCK_UNARY_GRAD(LeakyReluGradOp, v > 0.0f ? 1.0f : a.alpha)
POCK_UNARY_GRAD(ClipGradOp, a.clip.inside(v) ? 1.0f : 0.0f)
POCK_UNARY_GRAD(GeluGradOp, gelu_derivative(v, a.tanh_gelu))
POCK_UNARY_GRAD(SiluGradOp, silu_derivative(v))
POCK_UNARY_GRAD(HardSwishGradOp, hardswish_derivative(v))
POCK_UNARY_GRAD(HardSigmoidGradOp, v > -3.0f && v < 3.0f ? 1.0f / 6.0f : 0.0f)
POCK_UNARY_GRAD(AbsGradOp, v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f))
POCK_UNARY_GRAD(SigmoidGradOp, v * (1.0f - v))
POCK_UNARY_GRAD(TanhGradOp, 1.0f - v * v)
#undef POCK_UNARY_GRAD

// The one list of the (dy, v) -> dx gradients, read by elementwise_grad.cu and the logic test.
#define POCK_CUDA_UNARY_GRAD_OPS(X)                                                               \
  X("ReluGrad", ReluGradOp) X("Relu6Grad", Relu6GradOp) X("LeakyReluGrad", LeakyReluGradOp)       \
  X("ClipGrad", ClipGradOp) X("GeluGrad", GeluGradOp) X("SiluGrad", SiluGradOp)                   \
  X("HardSwishGrad", HardSwishGradOp) X("HardSigmoidGrad", HardSigmoidGradOp)                     \
  X("AbsGrad", AbsGradOp) X("SigmoidGrad", SigmoidGradOp) X("TanhGrad", TanhGradOp)

// ---- (dy, a, b) -> (da, db) at dy's shape, a and b broadcast ------------------------------------

// Ties split dy evenly, as ref (and PyTorch) do.
template <bool kMax>
struct SelectGradOp {
  static POCK_HD void apply(float g, float a, float b, float* da, float* db) {
    const bool a_wins = kMax ? a > b : a < b;
    const float share_a = a == b ? 0.5f : (a_wins ? 1.0f : 0.0f);
    *da = g * share_a;
    *db = g * (1.0f - share_a);
  }
};

struct PowGradOp {
  static POCK_HD void apply(float g, float x, float e, float* da, float* db) {
    // d/da: e * a^(e-1), 0 for e == 0 (PyTorch masks it there too).
    *da = e == 0.0f ? 0.0f : g * e * powf(x, e - 1.0f);
    // d/db: a^e ln a; at a == 0 with e >= 0 the limit is 0 (PyTorch's convention).
    *db = x == 0.0f && e >= 0.0f ? 0.0f : g * powf(x, e) * logf(x);
  }
};

template <typename Op>
struct PairGradMap {
  const float* dy;
  const float* a;
  const float* b;
  float* da;
  float* db;
  StridedIndex<2> index;  // of a and b against dy's shape
  POCK_HD void operator()(int64_t i) const {
    Op::apply(dy[i], a[index.offset(0, i)], b[index.offset(1, i)], da + i, db + i);
  }
};

// ---- reduction gradients --------------------------------------------------------------------------

// ReduceSumGrad: dx = dy broadcast back over the reduced dims, times `scale` (a mean's 1/n).
struct ScaleOp {
  static POCK_HD float apply(float dy, const float& scale) { return dy * scale; }
};

// ReduceMaxGrad's second pass: dy of a group goes to its maxima, split among ties.
struct MaxGradMap {
  const float* dy;
  const float* x;
  const float* ymax;
  const float* ties;  // per reduced element, from the first pass
  float* dx;
  StridedIndex<1> reduced;  // dx's element -> its reduced element
  POCK_HD void operator()(int64_t i) const {
    const int64_t r = reduced.offset(0, i);
    dx[i] = x[i] == ymax[r] ? dy[r] / ties[r] : 0.0f;
  }
};

// The full-rank view of a reduced tensor (reduced dims kept as 1), to broadcast it back.
inline pock_tensor_desc keepdims_view(const bool* reduced, const pock_tensor_desc& full) {
  pock_tensor_desc v{};
  v.rank = full.rank;
  for (int d = 0; d < full.rank; ++d) v.dims[d] = reduced[d] ? 1 : full.dims[d];
  return v;
}

// The dims of `full` that SumToShape sums away to reach `to` (numpy broadcasting, backwards).
inline void sum_to_shape_dims(const pock_tensor_desc& full, const pock_tensor_desc& to, bool* reduced) {
  for (int d = 0; d < full.rank; ++d) {
    const int td = d - (full.rank - to.rank);
    reduced[d] = td < 0 || (to.dims[td] == 1 && full.dims[d] != 1);
  }
}

}  // namespace pock::cuda
