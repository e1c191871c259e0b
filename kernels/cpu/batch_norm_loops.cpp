// The cpu backend's vectorized loops for the per-channel BatchNorm steps of batch_norm_steps.hpp,
// shared by its BatchNorm, BatchNormTrain and BatchNorm gradient kernels.
#include "kernels/cpu/batch_norm_steps.hpp"
#include "kernels/cpu/vec8.hpp"

namespace pock::cpu {
namespace {

// The reductions keep eight-float vector sums across all the rows of a call and add their lanes
// once at the end: a vectorized loop per row (as `omp simd reduction` makes it) ends each row of a
// 4x4 plane (16 values) with a horizontal sum, which cost more than the additions.
#pragma GCC diagnostic ignored "-Wpsabi"  // the Vec helpers are inlined (vec8.hpp)
using Vec = simd::Vec8;
using simd::lane_sum8;
using simd::load8;

POCK_SIMD_CLONES float sum(const float* x, int64_t rows, int64_t stride, int64_t n) {
  Vec acc = {};
  float tail = 0.0f;
  for (int64_t r = 0; r < rows; ++r, x += stride) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc += load8(x + i);
    for (; i < n; ++i) tail += x[i];
  }
  return lane_sum8(acc) + tail;
}

POCK_SIMD_CLONES float sum_squared_deviation(const float* x, float center, int64_t rows, int64_t stride, int64_t n) {
  Vec acc = {};
  float tail = 0.0f;
  for (int64_t r = 0; r < rows; ++r, x += stride) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const Vec d = load8(x + i) - center;
      acc += d * d;
    }
    for (; i < n; ++i) tail += (x[i] - center) * (x[i] - center);
  }
  return lane_sum8(acc) + tail;
}

POCK_SIMD_CLONES void normalize(const float* x, float center, float scale, float shift, Clamp clamp, float* y,
                                int64_t rows, int64_t stride, int64_t n) {
  const float lo = clamp.lo, hi = clamp.hi;
  for (int64_t r = 0; r < rows; ++r, x += stride, y += stride) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float v = (x[i] - center) * scale + shift;
      const float above = v < lo ? lo : v;
      y[i] = above > hi ? hi : above;
    }
  }
}

POCK_SIMD_CLONES void grad_sums(const float* dy, const float* x, float center, int64_t rows, int64_t stride,
                                int64_t n, float* sum_dy, float* sum_dy_dev) {
  Vec s = {}, sd = {};
  float s_tail = 0.0f, sd_tail = 0.0f;
  for (int64_t r = 0; r < rows; ++r, dy += stride, x += stride) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const Vec g = load8(dy + i);
      s += g;
      sd += g * (load8(x + i) - center);
    }
    for (; i < n; ++i) {
      s_tail += dy[i];
      sd_tail += dy[i] * (x[i] - center);
    }
  }
  *sum_dy = lane_sum8(s) + s_tail;
  *sum_dy_dev = lane_sum8(sd) + sd_tail;
}

POCK_SIMD_CLONES void combine(const float* dy, const float* x, float center, float a, float b, float c, float* dx,
                              int64_t rows, int64_t stride, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, dy += stride, x += stride, dx += stride) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dx[i] = a * dy[i] + b * (x[i] - center) + c;
  }
}

}  // namespace

const BatchNormLoops& cpu_batch_norm_loops() {
  static const BatchNormLoops loops{sum, sum_squared_deviation, normalize, grad_sums, combine};
  return loops;
}

}  // namespace pock::cpu
