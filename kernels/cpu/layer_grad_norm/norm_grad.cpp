// LayerNormGrad, RMSNormGrad, SoftmaxGrad and LogSoftmaxGrad on the cpu backend: the row
// traversal of norm_grad_steps.hpp with vectorized loops. Each row is two passes: the sums the
// formula needs, then dx in one fused expression.
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/norm_grad_steps.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

// dx = invstd (g dy - mean(g dy) - xhat mean(g dy xhat)), written as
// a g dy + b (x - mean) + c with the row's sums folded into a, b, c.
POCK_SIMD_CLONES void layer_norm_row(const float* dy, const float* x, const float* gamma, float mean, float invstd,
                                     float* dx, int64_t n) {
  float sum_gdy = 0.0f, sum_gdy_dev = 0.0f;
  if (gamma) {
#pragma omp simd reduction(+ : sum_gdy, sum_gdy_dev)
    for (int64_t i = 0; i < n; ++i) {
      sum_gdy += gamma[i] * dy[i];
      sum_gdy_dev += gamma[i] * dy[i] * (x[i] - mean);
    }
  } else {
#pragma omp simd reduction(+ : sum_gdy, sum_gdy_dev)
    for (int64_t i = 0; i < n; ++i) {
      sum_gdy += dy[i];
      sum_gdy_dev += dy[i] * (x[i] - mean);
    }
  }
  const float inv_n = n ? 1.0f / static_cast<float>(n) : 0.0f;
  const float b = -invstd * invstd * invstd * sum_gdy_dev * inv_n;
  const float c = -invstd * sum_gdy * inv_n;
  if (gamma) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = invstd * gamma[i] * dy[i] + b * (x[i] - mean) + c;
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = invstd * dy[i] + b * (x[i] - mean) + c;
  }
}

POCK_SIMD_CLONES void layer_norm_params(const float* dy, const float* x, float mean, float invstd, float* dgamma,
                                        float* dbeta, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    dgamma[i] += dy[i] * (x[i] - mean) * invstd;
    dbeta[i] += dy[i];
  }
}

// dx = r g dy - x r^3 mean(g dy x)
POCK_SIMD_CLONES void rms_norm_row(const float* dy, const float* x, const float* gamma, float invrms, float* dx,
                                   int64_t n) {
  float sum = 0.0f;
  if (gamma) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += gamma[i] * dy[i] * x[i];
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += dy[i] * x[i];
  }
  const float b = -invrms * invrms * invrms * (n ? sum / static_cast<float>(n) : 0.0f);
  if (gamma) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = invrms * gamma[i] * dy[i] + b * x[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = invrms * dy[i] + b * x[i];
  }
}

POCK_SIMD_CLONES void rms_norm_gamma(const float* dy, const float* x, float invrms, float* dgamma, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dgamma[i] += dy[i] * x[i] * invrms;
}

POCK_SIMD_CLONES void softmax_row(const float* dy, const float* y, float* dx, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += dy[i] * y[i];
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (dy[i] - sum);
}

POCK_SIMD_CLONES void log_softmax_row(const float* dy, const float* y, float* dx, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += dy[i];
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] - simd::exp(y[i]) * sum;
}

const NormGradLoops kLoops{layer_norm_row, layer_norm_params, rms_norm_row,
                           rms_norm_gamma, softmax_row,       log_softmax_row};

}  // namespace

void register_norm_grad(KernelTable& t) { NormGradKernels<kLoops>::register_all(t, kCpuScore); }

}  // namespace pock::cpu
