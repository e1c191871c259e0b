// The cpu backend's vectorized loops for the per-channel BatchNorm steps of batch_norm_steps.hpp,
// shared by its BatchNorm, BatchNormTrain and BatchNorm gradient kernels.
#include "kernels/cpu/batch_norm_steps.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

POCK_SIMD_CLONES float sum(const float* x, int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

POCK_SIMD_CLONES float sum_squared_deviation(const float* x, float center, int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += (x[i] - center) * (x[i] - center);
  return s;
}

POCK_SIMD_CLONES void normalize(const float* x, float center, float scale, float shift, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale + shift;
}

POCK_SIMD_CLONES void grad_sums(const float* dy, const float* x, float center, int64_t n, float* sum_dy,
                                float* sum_dy_dev) {
  float s = 0.0f, sd = 0.0f;
#pragma omp simd reduction(+ : s, sd)
  for (int64_t i = 0; i < n; ++i) {
    s += dy[i];
    sd += dy[i] * (x[i] - center);
  }
  *sum_dy = s;
  *sum_dy_dev = sd;
}

POCK_SIMD_CLONES void combine(const float* dy, const float* x, float center, float a, float b, float c, float* dx,
                              int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = a * dy[i] + b * (x[i] - center) + c;
}

}  // namespace

const BatchNormLoops& cpu_batch_norm_loops() {
  static const BatchNormLoops loops{sum, sum_squared_deviation, normalize, grad_sums, combine};
  return loops;
}

}  // namespace pock::cpu
