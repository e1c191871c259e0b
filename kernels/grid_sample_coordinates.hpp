// GridSample's coordinate mapping, shared by every backend so that all of them sample the same
// pixels: following torch.nn.functional.grid_sample (which ONNX GridSample specifies), a grid value
// g in [-1, 1] maps to a source pixel coordinate, and padding clamps or mirrors it. Each helper
// returns the mapped value and sets *d to its derivative (what the grid's gradient multiplies).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/params/grid_sample.hpp"

namespace pock::grid {

inline double unnormalize(double g, int64_t size, bool align_corners, double* d) {
  if (align_corners) {
    *d = static_cast<double>(size - 1) / 2;
    return (g + 1) / 2 * static_cast<double>(size - 1);
  }
  *d = static_cast<double>(size) / 2;
  return ((g + 1) * static_cast<double>(size) - 1) / 2;
}

inline double clip(double x, int64_t size, double* d) {
  const double hi = static_cast<double>(size - 1);
  *d = (x <= 0 || x >= hi) ? 0.0 : 1.0;
  return x <= 0 ? 0.0 : (x >= hi ? hi : x);
}

// Mirrors x into [twice_low / 2, twice_high / 2] as often as it takes.
inline double reflect(double x, double twice_low, double twice_high, double* d) {
  if (twice_low == twice_high) {
    *d = 0;
    return 0;
  }
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x -= low;
  const double sign = x < 0 ? -1.0 : 1.0;
  x = std::fabs(x);
  const double extra = std::fmod(x, span);
  const bool even = static_cast<int64_t>(std::floor(x / span)) % 2 == 0;
  *d = even ? sign : -sign;
  return even ? extra + low : span - extra + low;
}

// The padding mode applied to a source coordinate (zeros leaves it: out-of-range taps read 0).
inline double pad_coordinate(double x, int64_t size, const params::GridSampleParams& p, double* d) {
  *d = 1;
  if (p.padding == params::GridPadding::kBorder) return clip(x, size, d);
  if (p.padding == params::GridPadding::kReflection) {
    double dr = 1, dc = 1;
    x = p.align_corners ? reflect(x, 0, 2.0 * static_cast<double>(size - 1), &dr)
                        : reflect(x, -1, 2.0 * static_cast<double>(size) - 1, &dr);
    x = clip(x, size, &dc);
    *d = dr * dc;
  }
  return x;
}

// Source coordinate of grid value g for bilinear and nearest, with d(source)/dg.
inline double source_coordinate(double g, int64_t size, const params::GridSampleParams& p, double* d) {
  double du = 0, dp = 0;
  const double x = pad_coordinate(unnormalize(g, size, p.align_corners, &du), size, p, &dp);
  *d = du * dp;
  return x;
}

// Keys' cubic convolution weights (A = -0.75, as torch) of the taps at offsets -1, 0, 1, 2 from
// floor(x), t = x - floor(x).
inline void cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };      // |s| <= 1
  auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// d w[k] / dt of cubic_weights' w (bicubic's grid gradient).
inline void cubic_weight_derivatives(double t, double dw[4]) {
  const double a = -0.75;
  auto near = [a](double s) { return (3 * (a + 2) * s - 2 * (a + 3)) * s; };  // d/ds of |s| <= 1
  auto far = [a](double s) { return (3 * a * s - 10 * a) * s + 8 * a; };      // d/ds of 1 < |s| < 2
  dw[0] = far(t + 1);
  dw[1] = near(t);
  dw[2] = -near(1 - t);
  dw[3] = -far(2 - t);
}

}  // namespace pock::grid
