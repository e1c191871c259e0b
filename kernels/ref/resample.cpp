// Reference kernels of the resample family. Resize is separable: it resamples one axis after
// another, each output position a weighted sum of up to four input positions (its taps). The taps
// follow ONNX's reference implementation: the output coordinate maps to an input coordinate x,
// r = x - floor(x) (1 when x is whole, which selects the pixel on the left), and the taps start at
// x - r (nearest, linear) or one before (cubic), clamped to the edge. ResizeGrad applies the
// transposed taps, so both agree on every rounding decision.
#include <cmath>
#include <vector>

#include "kernels/params/resample.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using params::NearestRounding;
using params::ResizeCoordinates;
using params::ResizeMode;
using params::ResizeParams;

struct AxisTaps {
  int count = 0;                // taps per output position: 2 or 4
  std::vector<int64_t> index;   // [out * count], clamped into the input
  std::vector<double> weight;   // [out * count]
};

// The input coordinate of output position x; `out_length` is scale * in, as ONNX's reference takes it.
double source_coordinate(ResizeCoordinates mode, double x, double scale, int64_t in) {
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
void cubic_weights(double r, double a, double* w) {
  const double s = r + 1, t = 1 - r, u = 2 - r;
  w[0] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  w[2] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[3] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
}

// Weights of the taps at x - r and x - r + 1.
void two_tap_weights(const ResizeParams& p, double r, double* w) {
  if (p.mode == ResizeMode::kLinear) {
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

AxisTaps axis_taps(const ResizeParams& p, double scale, int64_t in, int64_t out) {
  AxisTaps t;
  t.count = p.mode == ResizeMode::kCubic ? 4 : 2;
  t.index.resize(static_cast<size_t>(out * t.count));
  t.weight.resize(t.index.size());
  for (int64_t j = 0; j < out; ++j) {
    const double x = source_coordinate(p.coordinates, static_cast<double>(j), scale, in);
    double r = x - std::floor(x);
    if (r == 0.0) r = 1.0;
    const int64_t first = static_cast<int64_t>(std::llround(x - r)) - (t.count == 4 ? 1 : 0);
    double* w = &t.weight[static_cast<size_t>(j * t.count)];
    if (t.count == 4) {
      cubic_weights(r, p.cubic_a, w);
    } else {
      two_tap_weights(p, r, w);
    }
    double kept = 0.0;
    for (int k = 0; k < t.count; ++k) {
      const int64_t i = first + k;
      if (p.exclude_outside && (i < 0 || i >= in)) w[k] = 0.0;
      kept += w[k];
      t.index[static_cast<size_t>(j * t.count + k)] = i < 0 ? 0 : (i >= in ? in - 1 : i);
    }
    if (p.exclude_outside && kept != 0.0) {
      for (int k = 0; k < t.count; ++k) w[k] /= kept;
    }
  }
  return t;
}

// One axis of a [outer, length, inner] view: forward gathers through the taps, transpose
// scatters back through them.
void resample_axis(const std::vector<double>& src, std::vector<double>& dst, const AxisTaps& t, int64_t outer,
                   int64_t src_len, int64_t dst_len, int64_t inner, bool transpose) {
  dst.assign(static_cast<size_t>(outer * dst_len * inner), 0.0);
  const int64_t positions = transpose ? src_len : dst_len;  // the resized side
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < positions; ++j) {
      for (int k = 0; k < t.count; ++k) {
        const double w = t.weight[static_cast<size_t>(j * t.count + k)];
        if (w == 0.0) continue;
        const int64_t i = t.index[static_cast<size_t>(j * t.count + k)];
        const int64_t from = transpose ? j : i, to = transpose ? i : j;
        const double* s = &src[static_cast<size_t>((o * src_len + from) * inner)];
        double* d = &dst[static_cast<size_t>((o * dst_len + to) * inner)];
        for (int64_t e = 0; e < inner; ++e) d[e] += w * s[e];
      }
    }
  }
}

// small: Resize's input shape; large: its output shape. Forward maps small -> large; transpose
// (ResizeGrad) maps large -> small. Axes whose size and scale are both unchanged are the
// identity under every mode and are skipped.
Status resample(const KernelCall& c, const ResizeParams& p, const pock_tensor_desc& small, const pock_tensor_desc& large,
                bool transpose) {
  const int rank = small.rank;
  const pock_tensor_desc& from = transpose ? large : small;
  std::vector<double> cur(c.in_data<float>(0), c.in_data<float>(0) + numel(from)), next;
  Shape dims = shape_of(from);
  for (int d = rank - 1; d >= 0; --d) {  // innermost first, as ONNX's reference nests them
    const int64_t in = small.dims[d], out = large.dims[d];
    const double scale = p.scales[static_cast<size_t>(d)];
    if (in == out && scale == 1.0) continue;
    const AxisTaps taps = axis_taps(p, scale, in, out);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < d; ++k) outer *= dims[k];
    for (int k = d + 1; k < rank; ++k) inner *= dims[k];
    const int64_t target = transpose ? in : out;
    resample_axis(cur, next, taps, outer, dims[d], target, inner, transpose);
    dims[d] = target;
    cur.swap(next);
  }
  float* y = c.out_data<float>(0);
  for (size_t e = 0; e < cur.size(); ++e) y[e] = static_cast<float>(cur[e]);
  return Status::ok();
}

Status resize(const KernelCall& c, const ResizeParams& p) { return resample(c, p, c.in(0), c.out(0), false); }
Status resize_grad(const KernelCall& c, const ResizeParams& p) { return resample(c, p, c.out(0), c.in(0), true); }

}  // namespace

void register_ref_resample(KernelTable& t) {
  t.add(typed_kernel<ResizeParams, resize>("Resize", DType::kF32));
  t.add(typed_kernel<ResizeParams, resize_grad>("ResizeGrad", DType::kF32));
}

}  // namespace pock
