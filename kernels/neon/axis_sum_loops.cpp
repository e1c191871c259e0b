// The neon backend's loops for the gradient sums of kernels/cpu/axis_sum.hpp: four-lane row sums
// (two accumulators, so that consecutive adds do not wait on each other) and row accumulation.
#include <arm_neon.h>

#include "kernels/neon/neon_axis_sum.hpp"

namespace pock::neon {
namespace {

float row_sum(const float* x, int64_t n) {
  float32x4_t a = vdupq_n_f32(0.0f), b = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a = vaddq_f32(a, vld1q_f32(x + i));
    b = vaddq_f32(b, vld1q_f32(x + i + 4));
  }
  for (; i + 4 <= n; i += 4) a = vaddq_f32(a, vld1q_f32(x + i));
  float sum = vaddvq_f32(vaddq_f32(a, b));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

void accumulate(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

}  // namespace

const cpu::AxisSumLoops& neon_axis_sum_loops() {
  static const cpu::AxisSumLoops loops{row_sum, accumulate};
  return loops;
}

}  // namespace pock::neon
