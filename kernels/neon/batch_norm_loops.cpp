// The neon backend's four-lane loops for the per-channel BatchNorm steps of
// kernels/cpu/batch_norm_steps.hpp. Reductions finish their tails in scalar code (a zero-padded
// lane would add (0 - center)^2); elementwise passes go through neon_util's padded tail.
#include <arm_neon.h>

#include "kernels/neon/neon_batch_norm.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

// Each runs over `rows` rows of n values, `stride` apart (kernels/cpu/batch_norm_steps.hpp).
float sum(const float* x, int64_t rows, int64_t stride, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  float s = 0.0f;
  for (int64_t r = 0; r < rows; ++r, x += stride) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) acc = vaddq_f32(acc, vld1q_f32(x + i));
    for (; i < n; ++i) s += x[i];
  }
  return s + vaddvq_f32(acc);
}

float sum_squared_deviation(const float* x, float center, int64_t rows, int64_t stride, int64_t n) {
  const float32x4_t c = vdupq_n_f32(center);
  float32x4_t acc = vdupq_n_f32(0.0f);
  float s = 0.0f;
  for (int64_t r = 0; r < rows; ++r, x += stride) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const float32x4_t d = vsubq_f32(vld1q_f32(x + i), c);
      acc = vfmaq_f32(acc, d, d);
    }
    for (; i < n; ++i) s += (x[i] - center) * (x[i] - center);
  }
  return s + vaddvq_f32(acc);
}

// The clamp by compare and select, as ref's Relu6: vmaxq / vminq would make -0 into +0.
void normalize(const float* x, float center, float scale, float shift, cpu::Clamp clamp, float* y, int64_t rows,
               int64_t stride, int64_t n) {
  const float32x4_t c = vdupq_n_f32(center), k = vdupq_n_f32(scale), b = vdupq_n_f32(shift);
  const float32x4_t lo = vdupq_n_f32(clamp.lo), hi = vdupq_n_f32(clamp.hi);
  for (int64_t r = 0; r < rows; ++r, x += stride, y += stride) {
    map(x, y, n, [&](float32x4_t v) {
      const float32x4_t t = vfmaq_f32(b, vsubq_f32(v, c), k);
      const float32x4_t above = select(vcltq_f32(t, lo), lo, t);
      return select(vcgtq_f32(above, hi), hi, above);
    });
  }
}

void grad_sums(const float* dy, const float* x, float center, int64_t rows, int64_t stride, int64_t n, float* sum_dy,
               float* sum_dy_dev) {
  const float32x4_t c = vdupq_n_f32(center);
  float32x4_t s = vdupq_n_f32(0.0f), sd = vdupq_n_f32(0.0f);
  float total = 0.0f, total_dev = 0.0f;
  for (int64_t r = 0; r < rows; ++r, dy += stride, x += stride) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const float32x4_t g = vld1q_f32(dy + i);
      s = vaddq_f32(s, g);
      sd = vfmaq_f32(sd, g, vsubq_f32(vld1q_f32(x + i), c));
    }
    for (; i < n; ++i) {
      total += dy[i];
      total_dev += dy[i] * (x[i] - center);
    }
  }
  *sum_dy = total + vaddvq_f32(s);
  *sum_dy_dev = total_dev + vaddvq_f32(sd);
}

// dx = a dy + b (x - center) + c
void combine(const float* dy, const float* x, float center, float a, float b, float c, float* dx, int64_t rows,
             int64_t stride, int64_t n) {
  const float32x4_t vc = vdupq_n_f32(center), va = vdupq_n_f32(a), vb = vdupq_n_f32(b), shift = vdupq_n_f32(c);
  for (int64_t r = 0; r < rows; ++r, dy += stride, x += stride, dx += stride) {
    map(dy, x, dx, n,
        [&](float32x4_t g, float32x4_t v) { return vfmaq_f32(vfmaq_f32(shift, g, va), vsubq_f32(v, vc), vb); });
  }
}

}  // namespace

const cpu::BatchNormLoops& neon_batch_norm_loops() {
  static const cpu::BatchNormLoops loops{sum, sum_squared_deviation, normalize, grad_sums, combine};
  return loops;
}

}  // namespace pock::neon
