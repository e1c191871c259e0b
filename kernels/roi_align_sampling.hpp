// RoiAlign's sampling grid, shared by every backend so that all of them read the same pixels with
// the same weights: following ONNX's RoiAlign (as onnxruntime computes it), a region's bins are
// sampled on a regular grid, each sample a bilinear blend of its four neighbouring pixels (samples
// more than a pixel outside the map contribute 0; ones just outside are clamped to the edge).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/params/roi_align.hpp"

namespace pock::roi {

// One bilinear sample: four pixel offsets in a plane and their weights (all 0 when outside).
struct Sample {
  int64_t at[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

inline Sample bilinear(double y, double x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y0 = y1 = h - 1, y = static_cast<double>(y0);
  if (x0 >= w - 1) x0 = x1 = w - 1, x = static_cast<double>(x0);
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0), hy = 1 - ly, hx = 1 - lx;
  s.at[0] = y0 * w + x0, s.at[1] = y0 * w + x1, s.at[2] = y1 * w + x0, s.at[3] = y1 * w + x1;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

// Calls f(bin, sample, samples_in_bin) for every sample of every bin of the region `roi` (x1, y1,
// x2, y2) on an h x w map, bins in row-major order, each bin's samples in row-major order.
template <typename F>
void for_each_sample(const float* roi, int64_t h, int64_t w, const params::RoiAlignParams& p, F&& f) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double x1 = roi[0] * p.spatial_scale - offset, y1 = roi[1] * p.spatial_scale - offset;
  double width = roi[2] * p.spatial_scale - offset - x1, height = roi[3] * p.spatial_scale - offset - y1;
  if (!p.half_pixel) width = std::max(width, 1.0), height = std::max(height, 1.0);
  const double bin_h = height / static_cast<double>(p.output_height), bin_w = width / static_cast<double>(p.output_width);
  const int64_t grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(height / static_cast<double>(p.output_height)));
  const int64_t grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(width / static_cast<double>(p.output_width)));
  const int64_t count = std::max<int64_t>(grid_h * grid_w, 1);
  for (int64_t ph = 0; ph < p.output_height; ++ph) {
    for (int64_t pw = 0; pw < p.output_width; ++pw) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
          f(ph * p.output_width + pw, bilinear(y, x, h, w), count);
        }
      }
    }
  }
}

// max mode: of a sample's four weighted taps the largest, the first of equal ones (the order
// onnxruntime's std::max keeps). Returns the tap's index 0..3.
template <typename V>
int max_tap(const Sample& s, const V* plane, double* value) {
  int best = 0;
  double v = s.w[0] * plane[s.at[0]];
  for (int k = 1; k < 4; ++k) {
    const double t = s.w[k] * plane[s.at[k]];
    if (v < t) v = t, best = k;
  }
  *value = v;
  return best;
}

}  // namespace pock::roi
