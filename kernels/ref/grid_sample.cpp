// Reference kernels of the grid_sample family, following torch.nn.functional.grid_sample (which
// ONNX GridSample specifies): a grid coordinate g in [-1, 1] maps to a source pixel coordinate
// (kernels/grid_sample_coordinates.hpp, which every backend shares), padding clamps or mirrors that
// coordinate (bilinear, nearest) or each of the 4x4 taps (bicubic), and taps outside the input
// read 0. Sums are in double.
#include <cmath>
#include <cstring>

#include "kernels/grid_sample_coordinates.hpp"
#include "kernels/params/grid_sample.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using params::GridPadding;
using params::GridSampleMode;
using params::GridSampleParams;

using grid::cubic_weights;
using grid::pad_coordinate;
using grid::source_coordinate;
using grid::unnormalize;

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

// bicubic: dx gets dy times each tap's weight; dgrid dy times the weights' derivatives against the
// tap values, times d(source)/dg of the unnormalization (the padding moves whole taps: no slope).
void bicubic_grad(const Plane& in, float* dx, double gx, double gy, double g, const GridSampleParams& p, float* dgrid) {
  double dux = 0, duy = 0, d = 0;
  const double x = unnormalize(gx, in.w, p.align_corners, &dux), y = unnormalize(gy, in.h, p.align_corners, &duy);
  const double fx = std::floor(x), fy = std::floor(y);
  double wx[4], wy[4], dwx[4], dwy[4];
  cubic_weights(x - fx, wx);
  cubic_weights(y - fy, wy);
  grid::cubic_weight_derivatives(x - fx, dwx);
  grid::cubic_weight_derivatives(y - fy, dwy);
  double gix = 0, giy = 0;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const auto ty = static_cast<int64_t>(pad_coordinate(fy - 1 + i, in.h, p, &d));
      const auto tx = static_cast<int64_t>(pad_coordinate(fx - 1 + j, in.w, p, &d));
      if (!in.inside(ty, tx)) continue;
      const double v = in.at(ty, tx) * g;
      dx[ty * in.w + tx] += static_cast<float>(wy[i] * wx[j] * g);
      gix += wy[i] * dwx[j] * v;
      giy += dwy[i] * wx[j] * v;
    }
  }
  dgrid[0] += static_cast<float>(gix * dux);
  dgrid[1] += static_cast<float>(giy * duy);
}

// dx: dy spread onto the taps with the forward weights. dgrid (bilinear, bicubic): dy times the
// weights' derivatives against the tap values, times d(source)/dg; nearest's is 0 (piecewise
// constant).
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
    if (p.mode == GridSampleMode::kBicubic) return bicubic_grad(in, dx + plane, gx, gy, dy[out], p, dgrid + at);
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
