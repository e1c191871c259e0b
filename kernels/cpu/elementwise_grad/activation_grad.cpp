// The activation gradients on the cpu backend: dx = dy * f'(v) in one vectorized loop per op,
// split over the thread pool (activation_grad_steps.hpp). Every derivative is written as a
// product with dy, as ref computes it, so that NaN and infinity propagate the same way; GELU and
// SiLU use simd.hpp's exp / erf polynomials, and tanh-GELU is written through the sigmoid
// (0.5 (1 + tanh z) = sigmoid(2z)) so that nothing cancels where tanh(z) is near -1.
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/activation_grad_steps.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

enum class Activation {
  kRelu,
  kRelu6,
  kLeakyRelu,
  kClip,
  kGeluErf,
  kGeluTanh,
  kSilu,
  kHardSwish,
  kHardSigmoid,
  kAbs,
  kSigmoidFromY,
  kTanhFromY,
  kElu,
  kSelu,
  kCelu,
  kSoftplus,
  kSoftsign,
  kThresholdedRelu,
  kMish,
};

// The piecewise derivatives pick their value through the bits: written as `c ? 1.0f : 0.0f` (or
// `c ? 1.0f : alpha`), GCC turns the product with dy into a branch and leaves the loop scalar —
// Relu6Grad ran at 3.7 ns an element, the branch mispredicted on every other one. The conditions
// combine with & (no short-circuit, which is control flow too).
POCK_SIMD_INLINE float pick(bool c, float a, float b) { return simd::select(c, a, b); }
POCK_SIMD_INLINE float one_if(bool c) { return simd::select(c, 1.0f, 0.0f); }

POCK_SIMD_CLONES void derivative_times_dy(Activation op, const float* dy, const float* v, float* dx, int64_t n,
                                          float alpha, float gamma, float lo, float hi) {
  auto loop = [&](auto d) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * d(v[i]);
  };
  switch (op) {
    case Activation::kRelu:
      loop([](float x) { return one_if(x > 0.0f); });
      break;
    case Activation::kRelu6:
      loop([](float x) { return one_if((x > 0.0f) & (x < 6.0f)); });
      break;
    case Activation::kLeakyRelu:
      loop([alpha](float x) { return pick(x > 0.0f, 1.0f, alpha); });
      break;
    case Activation::kClip:
      loop([lo, hi](float x) { return one_if((x >= lo) & (x <= hi)); });
      break;
    case Activation::kGeluErf:
      // Phi(x) + x phi(x)
      loop([](float x) {
        return 0.5f * (1.0f + simd::erf(x * 0.70710678118654752f)) +
               x * 0.39894228040143268f * simd::exp(-0.5f * x * x);
      });
      break;
    case Activation::kGeluTanh:
      // s + 2 x s (1 - s) k (1 + 3 c x^2), s = sigmoid(2 k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715
      loop([](float x) {
        const float s = simd::sigmoid(1.5957691216057308f * (x + 0.044715f * x * x * x));
        return s + 2.0f * x * s * (1.0f - s) * 0.79788456080286536f * (1.0f + 0.134145f * x * x);
      });
      break;
    case Activation::kSilu:
      loop([](float x) {
        const float s = simd::sigmoid(x);
        return s * (1.0f + x * (1.0f - s));
      });
      break;
    case Activation::kHardSwish:
      loop([](float x) { return pick(x < -3.0f, 0.0f, pick(x <= 3.0f, x * (1.0f / 3.0f) + 0.5f, 1.0f)); });
      break;
    case Activation::kHardSigmoid:
      loop([](float x) { return pick((x > -3.0f) & (x < 3.0f), 1.0f / 6.0f, 0.0f); });
      break;
    case Activation::kAbs:
      loop([](float x) { return pick(x > 0.0f, 1.0f, pick(x < 0.0f, -1.0f, 0.0f)); });
      break;
    case Activation::kSigmoidFromY:
      loop([](float y) { return y * (1.0f - y); });
      break;
    case Activation::kTanhFromY:
      loop([](float y) { return 1.0f - y * y; });
      break;
    case Activation::kElu:
      loop([alpha](float x) { return pick(x > 0.0f, 1.0f, alpha * simd::exp(x)); });
      break;
    case Activation::kSelu:
      loop([alpha, gamma](float x) { return gamma * pick(x > 0.0f, 1.0f, alpha * simd::exp(x)); });
      break;
    case Activation::kCelu:
      loop([alpha](float x) { return pick(x > 0.0f, 1.0f, simd::exp(x / alpha)); });
      break;
    case Activation::kSoftplus:
      loop([](float x) { return simd::sigmoid(x); });
      break;
    case Activation::kSoftsign:
      loop([](float x) {
        const float d = 1.0f + std::fabs(x);
        return 1.0f / (d * d);
      });
      break;
    case Activation::kThresholdedRelu:
      loop([alpha](float x) { return one_if(x > alpha); });
      break;
    case Activation::kMish:
      // tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x), sp = softplus(x)
      loop([](float x) {
        const float t = simd::tanh_softplus(x);
        return t + x * (1.0f - t * t) * simd::sigmoid(x);
      });
      break;
  }
}

template <Activation kOp>
void activation_loop(const float* dy, const float* v, float* dx, int64_t n, const ActivationGradParams& p) {
  derivative_times_dy(kOp, dy, v, dx, n, p.alpha, p.gamma, p.lo, p.hi);
}

template <Activation kOp>
Status activation_grad(const KernelCall& c, const params::ActivationParams& p) {
  return run_activation_grad(c, p, activation_loop<kOp>);
}

Status gelu_grad(const KernelCall& c, const params::ActivationParams& p) {
  return run_activation_grad(
      c, p, p.tanh_gelu ? activation_loop<Activation::kGeluTanh> : activation_loop<Activation::kGeluErf>);
}

template <Status (*Run)(const KernelCall&, const params::ActivationParams&)>
KernelDef def(const char* op) {
  return typed_kernel<params::ActivationParams, Run>(op, DType::kF32, kCpuScore, activation_grad_accepts);
}

}  // namespace

void register_activation_grad(KernelTable& t) {
  t.add(def<activation_grad<Activation::kRelu>>("ReluGrad"));
  t.add(def<activation_grad<Activation::kRelu6>>("Relu6Grad"));
  t.add(def<activation_grad<Activation::kLeakyRelu>>("LeakyReluGrad"));
  t.add(def<activation_grad<Activation::kClip>>("ClipGrad"));
  t.add(def<gelu_grad>("GeluGrad"));
  t.add(def<activation_grad<Activation::kSilu>>("SiluGrad"));
  t.add(def<activation_grad<Activation::kHardSwish>>("HardSwishGrad"));
  t.add(def<activation_grad<Activation::kHardSigmoid>>("HardSigmoidGrad"));
  t.add(def<activation_grad<Activation::kAbs>>("AbsGrad"));
  t.add(def<activation_grad<Activation::kSigmoidFromY>>("SigmoidGrad"));
  t.add(def<activation_grad<Activation::kTanhFromY>>("TanhGrad"));
  t.add(def<activation_grad<Activation::kElu>>("EluGrad"));
  t.add(def<activation_grad<Activation::kSelu>>("SeluGrad"));
  t.add(def<activation_grad<Activation::kCelu>>("CeluGrad"));
  t.add(def<activation_grad<Activation::kSoftplus>>("SoftplusGrad"));
  t.add(def<activation_grad<Activation::kSoftsign>>("SoftsignGrad"));
  t.add(def<activation_grad<Activation::kThresholdedRelu>>("ThresholdedReluGrad"));
  t.add(def<activation_grad<Activation::kMish>>("MishGrad"));
}

}  // namespace pock::cpu
