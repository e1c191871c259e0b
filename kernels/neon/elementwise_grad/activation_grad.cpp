// The activation gradients with NEON: dx = dy * f'(v), four lanes at a time, traversal and
// attributes from kernels/cpu/activation_grad_steps.hpp. Each derivative is the same expression
// as the cpu backend's (kernels/cpu/elementwise_grad/activation_grad.cpp), written with lane selects.
#include <arm_neon.h>

#include "kernels/cpu/activation_grad_steps.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_math.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

using cpu::ActivationGradParams;

float32x4_t splat(float v) { return vdupq_n_f32(v); }

// dx = dy * derivative(v) over the elements.
template <typename Derivative>
void times_dy(const float* dy, const float* v, float* dx, int64_t n, const Derivative& d) {
  map(dy, v, dx, n, [&](float32x4_t g, float32x4_t x) { return vmulq_f32(g, d(x)); });
}

// 1 where mask is set, 0 elsewhere.
float32x4_t indicator(uint32x4_t mask) { return select(mask, splat(1.0f), splat(0.0f)); }

void relu(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) { return indicator(vcgtq_f32(x, splat(0.0f))); });
}

void relu6(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n,
           [](float32x4_t x) { return indicator(vandq_u32(vcgtq_f32(x, splat(0.0f)), vcltq_f32(x, splat(6.0f)))); });
}

void leaky_relu(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams& p) {
  const float32x4_t alpha = splat(p.alpha);
  times_dy(dy, v, dx, n, [&](float32x4_t x) { return select(vcgtq_f32(x, splat(0.0f)), splat(1.0f), alpha); });
}

void clip(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams& p) {
  const float32x4_t lo = splat(p.lo), hi = splat(p.hi);
  times_dy(dy, v, dx, n, [&](float32x4_t x) { return indicator(vandq_u32(vcgeq_f32(x, lo), vcleq_f32(x, hi))); });
}

// Phi(x) + x phi(x)
void gelu_erf(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    const float32x4_t cdf = vmulq_n_f32(vaddq_f32(splat(1.0f), erf(vmulq_n_f32(x, 0.70710678118654752f))), 0.5f);
    const float32x4_t pdf = vmulq_n_f32(exp(vmulq_n_f32(vmulq_f32(x, x), -0.5f)), 0.39894228040143268f);
    return vfmaq_f32(cdf, x, pdf);
  });
}

// s + 2 x s (1 - s) k (1 + 3 c x^2), s = sigmoid(2 k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715
void gelu_tanh(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    const float32x4_t x2 = vmulq_f32(x, x);
    const float32x4_t inner = vmulq_n_f32(vfmaq_f32(x, vmulq_n_f32(x2, 0.044715f), x), 1.5957691216057308f);
    const float32x4_t s = sigmoid(inner);
    const float32x4_t slope = vmulq_n_f32(vfmaq_f32(splat(1.0f), x2, splat(0.134145f)), 2.0f * 0.79788456080286536f);
    return vfmaq_f32(s, vmulq_f32(vmulq_f32(x, s), vsubq_f32(splat(1.0f), s)), slope);
  });
}

// s (1 + x (1 - s)), s = sigmoid(x)
void silu(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    const float32x4_t s = sigmoid(x);
    return vmulq_f32(s, vfmaq_f32(splat(1.0f), x, vsubq_f32(splat(1.0f), s)));
  });
}

void hard_swish(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    const float32x4_t middle = vfmaq_f32(splat(0.5f), x, splat(1.0f / 3.0f));
    return select(vcltq_f32(x, splat(-3.0f)), splat(0.0f), select(vcleq_f32(x, splat(3.0f)), middle, splat(1.0f)));
  });
}

void hard_sigmoid(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    return select(vandq_u32(vcgtq_f32(x, splat(-3.0f)), vcltq_f32(x, splat(3.0f))), splat(1.0f / 6.0f), splat(0.0f));
  });
}

void absolute(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t x) {
    return select(vcgtq_f32(x, splat(0.0f)), splat(1.0f), select(vcltq_f32(x, splat(0.0f)), splat(-1.0f), splat(0.0f)));
  });
}

void sigmoid_from_y(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t y) { return vmulq_f32(y, vsubq_f32(splat(1.0f), y)); });
}

void tanh_from_y(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams&) {
  times_dy(dy, v, dx, n, [](float32x4_t y) { return vfmsq_f32(splat(1.0f), y, y); });
}

template <cpu::ActivationGradLoop kLoop>
Status activation_grad(const KernelCall& c, const params::ActivationParams& p) {
  return cpu::run_activation_grad(c, p, kLoop);
}

Status gelu_grad(const KernelCall& c, const params::ActivationParams& p) {
  return cpu::run_activation_grad(c, p, p.tanh_gelu ? gelu_tanh : gelu_erf);
}

template <Status (*Run)(const KernelCall&, const params::ActivationParams&)>
KernelDef grad_def(const char* op) {
  return typed_kernel<params::ActivationParams, Run>(op, DType::kF32, kNeonScore, cpu::activation_grad_accepts);
}

}  // namespace

void register_activation_grad(KernelTable& t) {
  t.add(grad_def<activation_grad<relu>>("ReluGrad"));
  t.add(grad_def<activation_grad<relu6>>("Relu6Grad"));
  t.add(grad_def<activation_grad<leaky_relu>>("LeakyReluGrad"));
  t.add(grad_def<activation_grad<clip>>("ClipGrad"));
  t.add(grad_def<gelu_grad>("GeluGrad"));
  t.add(grad_def<activation_grad<silu>>("SiluGrad"));
  t.add(grad_def<activation_grad<hard_swish>>("HardSwishGrad"));
  t.add(grad_def<activation_grad<hard_sigmoid>>("HardSigmoidGrad"));
  t.add(grad_def<activation_grad<absolute>>("AbsGrad"));
  t.add(grad_def<activation_grad<sigmoid_from_y>>("SigmoidGrad"));
  t.add(grad_def<activation_grad<tanh_from_y>>("TanhGrad"));
}

}  // namespace pock::neon
