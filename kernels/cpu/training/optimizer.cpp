// SgdUpdate, AdamUpdate, AccumulateGrad and GlobalNormClipScale on the cpu backend: one
// vectorized pass over param, grad and state per update (optimizer_steps.hpp reads the schedule
// and hyperparameters). Adam computes in f32 where ref uses double; the difference is a few f32
// ulp of each update.
#include <cmath>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/optimizer_steps.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

POCK_SIMD_CLONES void sgd_loop(float* p, float* grad, float* buf, int64_t n, float lr, float wd, float momentum,
                               float scale, bool nesterov, bool zero_grad) {
  if (buf) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float g = grad[i] * scale + wd * p[i];
      const float b = momentum * buf[i] + g;
      buf[i] = b;
      p[i] -= lr * (nesterov ? g + momentum * b : b);
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * (grad[i] * scale + wd * p[i]);
  }
  if (zero_grad) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) grad[i] = 0.0f;
  }
}

void sgd(float* p, float* grad, float* buf, int64_t n, const SgdStep& s) {
  sgd_loop(p, grad, buf, n, s.lr, s.weight_decay, s.momentum, s.grad_scale, s.nesterov, s.zero_grad);
}

POCK_SIMD_CLONES void adam_loop(float* p, float* grad, float* m, float* v, int64_t n, float b1, float b2, float eps,
                                float scale, float coupled_wd, float decay, float step_size, float inv_bias2_sqrt,
                                bool zero_grad) {
  const float one_minus_b1 = 1.0f - b1, one_minus_b2 = 1.0f - b2;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float w = p[i];
    const float g = grad[i] * scale + coupled_wd * w;
    const float mi = b1 * m[i] + one_minus_b1 * g;
    const float vi = b2 * v[i] + one_minus_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    p[i] = w * decay - step_size * mi / (std::sqrt(vi) * inv_bias2_sqrt + eps);
  }
  if (zero_grad) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) grad[i] = 0.0f;
  }
}

void adam(float* p, float* grad, float* m, float* v, int64_t n, const AdamStep& s) {
  adam_loop(p, grad, m, v, n, s.beta1, s.beta2, s.eps, s.grad_scale, s.coupled_weight_decay, s.decay, s.step_size,
            s.inv_bias2_sqrt, s.zero_grad);
}

POCK_SIMD_CLONES void accumulate(float* acc, const float* grad, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) acc[i] += grad[i];
}

POCK_SIMD_CLONES float sum_squares(const float* x, int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}

const OptimizerLoops kLoops{sgd, adam, accumulate, sum_squares};

}  // namespace

void register_optimizer(KernelTable& t) { OptimizerKernels<kLoops>::register_all(t, kCpuScore); }

}  // namespace pock::cpu
