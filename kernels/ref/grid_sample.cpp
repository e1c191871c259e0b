// Reference kernels of the grid_sample family, following torch.nn.functional.grid_sample (which
// ONNX GridSample specifies): a grid coordinate g in [-1, 1] maps to a source pixel coordinate,
// padding clamps or mirrors that coordinate (bilinear, nearest) or each of the 4x4 taps (bicubic),
// and taps outside the input read 0. Sums are in double.
#include <cmath>
#include <cstring>

#include "kernels/params/grid_sample.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using params::GridPadding;
using params::GridSampleMode;
using params::GridSampleParams;

// Each coordinate helper returns the mapped value and sets *d to its derivative.
double unnormalize(double g, int64_t size, bool align_corners, double* d) {
  if (align_corners) {
    *d = static_cast<double>(size - 1) / 2;
    return (g + 1) / 2 * static_cast<double>(size - 1);
  }
  *d = static_cast<double>(size) / 2;
  return ((g + 1) * static_cast<double>(size) - 1) / 2;
}

double clip(double x, int64_t size, double* d) {
  const double hi = static_cast<double>(size - 1);
  *d = (x <= 0 || x >= hi) ? 0.0 : 1.0;
  return x <= 0 ? 0.0 : (x >= hi ? hi : x);
}

// Mirrors x into [twice_low / 2, twice_high / 2] as often as it takes.
double reflect(double x, double twice_low, double twice_high, double* d) {
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
double pad_coordinate(double x, int64_t size, const GridSampleParams& p, double* d) {
  *d = 1;
  if (p.padding == GridPadding::kBorder) return clip(x, size, d);
  if (p.padding == GridPadding::kReflection) {
    double dr = 1, dc = 1;
    x = p.align_corners ? reflect(x, 0, 2.0 * static_cast<double>(size - 1), &dr)
                        : reflect(x, -1, 2.0 * static_cast<double>(size) - 1, &dr);
    x = clip(x, size, &dc);
    *d = dr * dc;
  }
  return x;
}

// Source coordinate of grid value g for bilinear and nearest, with d(source)/dg.
double source_coordinate(double g, int64_t size, const GridSampleParams& p, double* d) {
  double du = 0, dp = 0;
  const double x = pad_coordinate(unnormalize(g, size, p.align_corners, &du), size, p, &dp);
  *d = du * dp;
  return x;
}

// Keys' cubic convolution weights (A = -0.75, as torch) of the taps at offsets -1, 0, 1, 2 from
// floor(x), t = x - floor(x).
void cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };      // |s| <= 1
  auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// One image plane [H, W] of x.
struct Plane {
  const float* data;
  int64_t h, w;
  bool inside(int64_t y, int64_t x) const { return y >= 0 && y < h && x >= 0 && x < w; }
  double at(int64_t y, int64_t x) const { return inside(y, x) ? data[y * w + x] : 0.0; }
};

// A bilinear sample's four taps: (y0 + dy, x0 + dx) with weight wy[dy] * wx[dx].
struct BilinearTaps {
  int64_t x0, y0;
  double tx, ty;
  BilinearTaps(double x, double y)
      : x0(static_cast<int64_t>(std::floor(x))), y0(static_cast<int64_t>(std::floor(y))),
        tx(x - std::floor(x)), ty(y - std::floor(y)) {}
  double weight(int dy, int dx) const { return (dy ? ty : 1 - ty) * (dx ? tx : 1 - tx); }
};

double sample(const Plane& in, double gx, double gy, const GridSampleParams& p) {
  double d = 0;
  if (p.mode == GridSampleMode::kBicubic) {
    const double x = unnormalize(gx, in.w, p.align_corners, &d), y = unnormalize(gy, in.h, p.align_corners, &d);
    const double fx = std::floor(x), fy = std::floor(y);
    double wx[4], wy[4];
    cubic_weights(x - fx, wx);
    cubic_weights(y - fy, wy);
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const auto ty = static_cast<int64_t>(pad_coordinate(fy - 1 + i, in.h, p, &d));
        const auto tx = static_cast<int64_t>(pad_coordinate(fx - 1 + j, in.w, p, &d));
        sum += wy[i] * wx[j] * in.at(ty, tx);
      }
    }
    return sum;
  }
  const double x = source_coordinate(gx, in.w, p, &d), y = source_coordinate(gy, in.h, p, &d);
  if (p.mode == GridSampleMode::kNearest) {
    return in.at(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
  }
  const BilinearTaps t(x, y);
  double sum = 0;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) sum += t.weight(dy, dx) * in.at(t.y0 + dy, t.x0 + dx);
  }
  return sum;
}

// Loops over (n, c, output pixel) with the plane of x and the grid point it samples.
template <typename F>
void for_each_sample(const pock_tensor_desc& x, const pock_tensor_desc& grid, F&& f) {
  const int64_t n = x.dims[0], channels = x.dims[1], h = x.dims[2], w = x.dims[3];
  const int64_t points = grid.dims[1] * grid.dims[2];
  const auto* g = static_cast<const float*>(grid.data);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t plane = (b * channels + c) * h * w;
      for (int64_t q = 0; q < points; ++q) {
        const int64_t at = (b * points + q) * 2;
        f(plane, at, g[at], g[at + 1], (b * channels + c) * points + q);
      }
    }
  }
}

Status grid_sample(const KernelCall& c, const GridSampleParams& p) {
  const pock_tensor_desc& x = c.in(0);
  float* y = c.out_data<float>(0);
  for_each_sample(x, c.in(1), [&](int64_t plane, int64_t, double gx, double gy, int64_t out) {
    const Plane in{c.in_data<float>(0) + plane, x.dims[2], x.dims[3]};
    y[out] = static_cast<float>(sample(in, gx, gy, p));
  });
  return Status::ok();
}

// dx: dy spread onto the taps with the forward weights. dgrid (bilinear): dy times the weights'
// derivatives against the tap values, times d(source)/dg; nearest's is 0 (piecewise constant).
Status grid_sample_grad(const KernelCall& c, const GridSampleParams& p) {
  const pock_tensor_desc& x = c.in(1);
  const int64_t h = x.dims[2], w = x.dims[3];
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  float* dgrid = c.out_data<float>(1);
  std::memset(dx, 0, static_cast<size_t>(c.out(0).nbytes));
  std::memset(dgrid, 0, static_cast<size_t>(c.out(1).nbytes));
  for_each_sample(x, c.in(2), [&](int64_t plane, int64_t at, double gx, double gy, int64_t out) {
    const Plane in{c.in_data<float>(1) + plane, h, w};
    double ddx = 0, ddy = 0;
    const double sx = source_coordinate(gx, w, p, &ddx), sy = source_coordinate(gy, h, p, &ddy);
    const double g = dy[out];
    if (p.mode == GridSampleMode::kNearest) {
      const auto ny = static_cast<int64_t>(std::nearbyint(sy)), nx = static_cast<int64_t>(std::nearbyint(sx));
      if (in.inside(ny, nx)) dx[plane + ny * w + nx] += static_cast<float>(g);
      return;
    }
    const BilinearTaps t(sx, sy);
    double gix = 0, giy = 0;
    for (int oy = 0; oy < 2; ++oy) {
      for (int ox = 0; ox < 2; ++ox) {
        const int64_t ty = t.y0 + oy, tx = t.x0 + ox;
        if (!in.inside(ty, tx)) continue;
        const double v = in.at(ty, tx);
        dx[plane + ty * w + tx] += static_cast<float>(t.weight(oy, ox) * g);
        gix += (ox ? 1 : -1) * (oy ? t.ty : 1 - t.ty) * v * g;
        giy += (oy ? 1 : -1) * (ox ? t.tx : 1 - t.tx) * v * g;
      }
    }
    dgrid[at] += static_cast<float>(gix * ddx);
    dgrid[at + 1] += static_cast<float>(giy * ddy);
  });
  return Status::ok();
}

}  // namespace

void register_ref_grid_sample(KernelTable& t) {
  t.add(typed_kernel<GridSampleParams, grid_sample>("GridSample", DType::kF32));
  t.add(typed_kernel<GridSampleParams, grid_sample_grad>("GridSampleGrad", DType::kF32));
}

}  // namespace pock
