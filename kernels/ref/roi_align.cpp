// Reference kernels of the roi_align family, following ONNX's RoiAlign (as onnxruntime computes
// it): a region's bins are sampled on a regular grid, each sample a bilinear blend of its four
// neighbouring pixels (samples more than a pixel outside the map contribute 0; ones just outside
// are clamped to the edge). avg averages a bin's samples; max takes the largest weighted corner
// value of any sample (onnxruntime's definition). The gradient spreads dy back with the avg
// weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/roi_align.hpp"
#include "kernels/ref/ref_util.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

using params::RoiAlignParams;

// One bilinear sample: four pixel offsets in a plane and their weights (all 0 when outside).
struct Sample {
  int64_t at[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample bilinear(double y, double x, int64_t h, int64_t w) {
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

// Calls f(bin, sample, samples_in_bin) for every sample of every bin of region r.
template <typename F>
void for_each_sample(const float* roi, int64_t h, int64_t w, const RoiAlignParams& p, F&& f) {
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

int64_t batch_index(const pock_tensor_desc& t, int64_t r) {
  return t.dtype == POCK_I32 ? static_cast<const int32_t*>(t.data)[r] : static_cast<const int64_t*>(t.data)[r];
}

Status check_batch_indices(const KernelCall& c, const pock_tensor_desc& x, const pock_tensor_desc& batch) {
  for (int64_t r = 0; r < batch.dims[0]; ++r) {
    const int64_t b = batch_index(batch, r);
    if (b < 0 || b >= x.dims[0]) {
      return c.error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is out of range [0, " +
                     std::to_string(x.dims[0]) + ")");
    }
  }
  return Status::ok();
}

// Calls f(plane, roi, out) for every (region, channel): the offset of the region's map plane in x
// (or dx), the region's 4 coordinates, and the offset of its bins in y (or dy). Inputs x, rois and
// batch_indices start at input `first`.
template <typename F>
Status for_each_region_plane(const KernelCall& c, int first, const RoiAlignParams& p, F&& f) {
  const pock_tensor_desc& x = c.in(first);
  POCK_RETURN_IF_ERROR(check_batch_indices(c, x, c.in(first + 2)));
  const int64_t channels = x.dims[1], plane = x.dims[2] * x.dims[3], bins = p.output_height * p.output_width;
  for (int64_t r = 0; r < c.in(first + 1).dims[0]; ++r) {
    const int64_t b = batch_index(c.in(first + 2), r);
    for (int64_t ch = 0; ch < channels; ++ch) {
      f((b * channels + ch) * plane, c.in_data<float>(first + 1) + r * 4, (r * channels + ch) * bins);
    }
  }
  return Status::ok();
}

// The parameters and one region's bins (sums, and whether max has seen a sample), sized at
// prepare: a step allocates nothing.
struct RoiAlignState {
  RoiAlignParams p;
  std::vector<double> acc;
  std::vector<bool> seen;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    acc.resize(static_cast<size_t>(p.output_height * p.output_width));
    seen.resize(acc.size());
    return Status::ok();
  }
};

Status roi_align(const KernelCall& c, RoiAlignState& state) {
  const RoiAlignParams& p = state.p;
  const int64_t h = c.in(0).dims[2], w = c.in(0).dims[3], bins = p.output_height * p.output_width;
  std::vector<double>& acc = state.acc;
  std::vector<bool>& seen = state.seen;
  return for_each_region_plane(c, 0, p, [&](int64_t in, const float* roi, int64_t out) {
    const float* plane = c.in_data<float>(0) + in;
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(seen.begin(), seen.end(), false);
    for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t count) {
      double& a = acc[static_cast<size_t>(bin)];
      if (!p.max) {
        for (int k = 0; k < 4; ++k) a += s.w[k] * plane[s.at[k]] / static_cast<double>(count);
        return;
      }
      double v = s.w[0] * plane[s.at[0]];
      for (int k = 1; k < 4; ++k) v = std::max(v, s.w[k] * plane[s.at[k]]);
      a = seen[static_cast<size_t>(bin)] ? std::max(a, v) : v;
      seen[static_cast<size_t>(bin)] = true;
    });
    for (int64_t k = 0; k < bins; ++k) c.out_data<float>(0)[out + k] = static_cast<float>(acc[static_cast<size_t>(k)]);
  });
}

Status roi_align_grad(const KernelCall& c, const RoiAlignParams& p) {
  const int64_t h = c.in(1).dims[2], w = c.in(1).dims[3];
  std::memset(c.out(0).data, 0, static_cast<size_t>(c.out(0).nbytes));
  return for_each_region_plane(c, 1, p, [&](int64_t in, const float* roi, int64_t out) {
    float* plane = c.out_data<float>(0) + in;
    const float* dy = c.in_data<float>(0) + out;
    for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t count) {
      for (int k = 0; k < 4; ++k) plane[s.at[k]] += static_cast<float>(s.w[k] * dy[bin] / static_cast<double>(count));
    });
  });
}

}  // namespace

void register_ref_roi_align(KernelTable& t) {
  t.add(prepared_kernel<RoiAlignState, roi_align>("RoiAlign", DType::kF32));
  t.add(typed_kernel<RoiAlignParams, roi_align_grad>("RoiAlignGrad", DType::kF32));
}

}  // namespace pock
