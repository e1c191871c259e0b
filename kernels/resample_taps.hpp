// Resize's taps along one axis, shared by every backend so that all of them make the same rounding
// decisions: output position j reads up to four input positions (its taps), each with a weight.
// They follow ONNX's reference implementation: j maps to an input coordinate x, r = x - floor(x)
// (1 when x is whole, which selects the pixel on the left), and the taps start at x - r (nearest,
// linear) or one before (cubic), clamped to the edge. Weights are computed in double.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/params/resample.hpp"

namespace pock {

// Taps per output position of a mode: 4 for cubic, else 2 (nearest puts its weight on one of them).
inline int resize_tap_count(params::ResizeMode mode) { return mode == params::ResizeMode::kCubic ? 4 : 2; }

// The input coordinate of output position x; `out_length` is scale * in, as ONNX's reference takes it.
inline double resize_source_coordinate(params::ResizeCoordinates mode, double x, double scale, int64_t in) {
  using params::ResizeCoordinates;
  const double out_length = scale * static_cast<double>(in);
  switch (mode) {
    case ResizeCoordinates::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoordinates::kPytorchHalfPixel: return out_length > 1.0 ? (x + 0.5) / scale - 0.5 : -0.5;
    case ResizeCoordinates::kAlignCorners:
      return out_length == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (out_length - 1.0);
    case ResizeCoordinates::kAsymmetric: return x / scale;
    case ResizeCoordinates::kTfHalfPixelForNn: return (x + 0.5) / scale;
  }
  return x;
}

// Weights of the taps at x - r - 1 .. x - r + 2 (cubic, Keys' kernel with parameter a).
inline void resize_cubic_weights(double r, double a, double* w) {
  const double s = r + 1, t = 1 - r, u = 2 - r;
  w[0] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  w[2] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[3] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
}

// Weights of the taps at x - r and x - r + 1 (linear, or nearest's choice of one of them).
inline void resize_two_tap_weights(const params::ResizeParams& p, double r, double* w) {
  using params::NearestRounding;
  if (p.mode == params::ResizeMode::kLinear) {
    w[0] = 1 - r;
    w[1] = r;
    return;
  }
  bool right = true;  // a whole x (r == 1) is the right tap itself
  if (r != 1.0) {
    switch (p.nearest) {
      case NearestRounding::kRoundPreferFloor: right = r > 0.5; break;
      case NearestRounding::kRoundPreferCeil: right = r >= 0.5; break;
      case NearestRounding::kFloor: right = false; break;
      case NearestRounding::kCeil: right = true; break;
    }
  }
  w[0] = right ? 0.0 : 1.0;
  w[1] = right ? 1.0 : 0.0;
}

// The taps of output position j of an axis resized from `in` to any length with `scale`:
// resize_tap_count(p.mode) input positions (clamped into [0, in)) and their weights.
inline void resize_taps_at(const params::ResizeParams& p, double scale, int64_t in, int64_t j, int64_t* index,
                           double* w) {
  const int count = resize_tap_count(p.mode);
  const double x = resize_source_coordinate(p.coordinates, static_cast<double>(j), scale, in);
  double r = x - std::floor(x);
  if (r == 0.0) r = 1.0;
  const int64_t first = static_cast<int64_t>(std::llround(x - r)) - (count == 4 ? 1 : 0);
  if (count == 4) {
    resize_cubic_weights(r, p.cubic_a, w);
  } else {
    resize_two_tap_weights(p, r, w);
  }
  double kept = 0.0;
  for (int k = 0; k < count; ++k) {
    const int64_t i = first + k;
    if (p.exclude_outside && (i < 0 || i >= in)) w[k] = 0.0;
    kept += w[k];
    index[k] = i < 0 ? 0 : (i >= in ? in - 1 : i);
  }
  if (p.exclude_outside && kept != 0.0) {
    for (int k = 0; k < count; ++k) w[k] /= kept;
  }
}

}  // namespace pock
