// SgdUpdate, AdamUpdate, AccumulateGrad and GlobalNormClipScale with NEON: one four-lane pass over
// param, grad and state per update; schedule and hyperparameters come from
// kernels/cpu/optimizer_steps.hpp. The tails (n % 4 elements) run the same arithmetic in scalar
// code, in the same order, so every element is updated alike.
#include <arm_neon.h>

#include <cmath>

#include "kernels/cpu/optimizer_steps.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

using cpu::AdamStep;
using cpu::SgdStep;

void clear(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.0f;
}

void sgd(float* p, float* grad, float* buf, int64_t n, const SgdStep& s) {
  const float32x4_t scale = vdupq_n_f32(s.grad_scale), wd = vdupq_n_f32(s.weight_decay), lr = vdupq_n_f32(s.lr);
  const float32x4_t momentum = vdupq_n_f32(s.momentum);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t w = vld1q_f32(p + i);
    const float32x4_t g = vfmaq_f32(vmulq_f32(vld1q_f32(grad + i), scale), wd, w);  // grad scale + wd p
    float32x4_t step = g;
    if (buf) {
      const float32x4_t b = vfmaq_f32(g, momentum, vld1q_f32(buf + i));  // momentum buf + g
      vst1q_f32(buf + i, b);
      step = s.nesterov ? vfmaq_f32(g, momentum, b) : b;
    }
    vst1q_f32(p + i, vfmsq_f32(w, lr, step));
  }
  for (; i < n; ++i) {
    const float g = grad[i] * s.grad_scale + s.weight_decay * p[i];
    float step = g;
    if (buf) {
      buf[i] = s.momentum * buf[i] + g;
      step = s.nesterov ? g + s.momentum * buf[i] : buf[i];
    }
    p[i] -= s.lr * step;
  }
  if (s.zero_grad) clear(grad, n);
}

void adam(float* p, float* grad, float* m, float* v, int64_t n, const AdamStep& s) {
  const float32x4_t scale = vdupq_n_f32(s.grad_scale), wd = vdupq_n_f32(s.coupled_weight_decay);
  const float32x4_t b1 = vdupq_n_f32(s.beta1), b2 = vdupq_n_f32(s.beta2);
  const float32x4_t one_minus_b1 = vdupq_n_f32(1.0f - s.beta1), one_minus_b2 = vdupq_n_f32(1.0f - s.beta2);
  const float32x4_t decay = vdupq_n_f32(s.decay), step_size = vdupq_n_f32(s.step_size);
  const float32x4_t inv_bias2_sqrt = vdupq_n_f32(s.inv_bias2_sqrt), eps = vdupq_n_f32(s.eps);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t w = vld1q_f32(p + i);
    const float32x4_t g = vfmaq_f32(vmulq_f32(vld1q_f32(grad + i), scale), wd, w);
    const float32x4_t mi = vfmaq_f32(vmulq_f32(b1, vld1q_f32(m + i)), one_minus_b1, g);
    const float32x4_t vi = vfmaq_f32(vmulq_f32(b2, vld1q_f32(v + i)), one_minus_b2, vmulq_f32(g, g));
    vst1q_f32(m + i, mi);
    vst1q_f32(v + i, vi);
    const float32x4_t denom = vfmaq_f32(eps, vsqrtq_f32(vi), inv_bias2_sqrt);
    vst1q_f32(p + i, vfmsq_f32(vmulq_f32(w, decay), step_size, vdivq_f32(mi, denom)));
  }
  for (; i < n; ++i) {
    const float w = p[i];
    const float g = grad[i] * s.grad_scale + s.coupled_weight_decay * w;
    m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * g;
    v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
    p[i] = w * s.decay - s.step_size * (m[i] / (std::sqrt(v[i]) * s.inv_bias2_sqrt + s.eps));
  }
  if (s.zero_grad) clear(grad, n);
}

void accumulate(float* acc, const float* grad, int64_t n) {
  map(acc, grad, acc, n, [](float32x4_t a, float32x4_t g) { return vaddq_f32(a, g); });
}

float sum_squares(const float* x, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    acc = vfmaq_f32(acc, v, v);
  }
  float s = vaddvq_f32(acc);
  for (; i < n; ++i) s += x[i] * x[i];
  return s;
}

const cpu::OptimizerLoops kLoops{sgd, adam, accumulate, sum_squares};

}  // namespace

void register_optimizer(KernelTable& t) { cpu::OptimizerKernels<kLoops>::register_all(t, kNeonScore); }

}  // namespace pock::neon
