// cpu kernels of the grid_sample family: GridSample and GridSampleGrad (bilinear, nearest, bicubic)
// on f32, with the coordinate mapping every backend shares
// (kernels/grid_sample_coordinates.hpp, in double as ref).
// A sample's taps (pixel offsets in a plane, weights) depend on its grid point only, not on the
// channel: they are computed once per point and used for every channel, instead of once per
// (point, channel). Taps outside the input are dropped (they read 0, as in ref).
//   GridSample: points split over threads in chunks whose taps live on the stack; each chunk then
//     walks the channels, writing contiguous output rows.
//   GridSampleGrad: every point's taps (4, or bicubic's 16, with their weights' derivatives against
//     the grid) go to the backend's scratch (sized at prepare), then dx is accumulated plane by
//     plane (planes split over threads: no two write one pixel) and dgrid chunk of points by
//     chunk, summed over channels.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/grid_sample_coordinates.hpp"
#include "kernels/params/grid_sample.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

using params::GridSampleMode;
using params::GridSampleParams;

constexpr int kMaxTaps = 16;      // bicubic's 4 x 4
constexpr int64_t kChunk = 64;    // points whose taps one thread holds at a time

// One point's taps in its plane, inside ones only (what GridSample sums).
struct Taps {
  int count = 0;
  int32_t at[kMaxTaps];
  float w[kMaxTaps];
};

// A bilinear or nearest point's four corners by place k = 2 * dy + dx (nearest: corner 0 only),
// and what the grid's derivative needs: GridSampleGrad keeps one per point, so it is small.
struct Corners {
  int32_t at[4];
  float w[4];
  float tx, ty, dgx, dgy;  // bilinear fractions, d(source)/d(grid)
  uint8_t inside;          // bit k: corner k lies in the plane
};

struct GridPlan {
  GridSampleParams p;
  int64_t n = 0, channels = 0, h = 0, w = 0, points = 0;
  pthreadpool_t pool = nullptr;

  // x [N, C, H, W] and grid [N, Ho, Wo, 2] are inputs `first` and `first + 1`.
  Status prepare(const pock_op_desc& op, int first = 0) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const pock_tensor_desc& x = op.inputs[first];
    const pock_tensor_desc& grid = op.inputs[first + 1];
    n = x.dims[0];
    channels = x.dims[1];
    h = x.dims[2];
    w = x.dims[3];
    points = grid.dims[1] * grid.dims[2];
    pool = thread_pool_for(op.num_threads);
    return Status::ok();
  }
};

// A point's taps for the gradient: plane offsets, weights, and the weights' derivatives against the
// grid's x and y (d(source)/d(grid) included); K = 4 (bilinear, nearest) or 16 (bicubic).
template <int K>
struct GradTaps {
  int32_t at[K];
  float w[K], gx[K], gy[K];
  uint16_t inside;  // bit k: tap k lies in the plane
};

// GridSampleGrad (dy, x, grid): every point's GradTaps live in the backend's scratch during a run.
struct GridGradPlan : GridPlan {
  KernelScope* scope = nullptr;

  Status prepare(const pock_op_desc& op, KernelScope& kernel_scope) {
    POCK_RETURN_IF_ERROR(GridPlan::prepare(op, 1));
    const size_t per_point = p.mode == GridSampleMode::kBicubic ? sizeof(GradTaps<16>) : sizeof(GradTaps<4>);
    POCK_RETURN_IF_ERROR(kernel_scope.reserve_scratch(static_cast<size_t>(n * points) * per_point, "GridSampleGrad taps"));
    scope = &kernel_scope;
    return Status::ok();
  }
};

void add_tap(Taps& t, int64_t y, int64_t x, double weight, const GridPlan& g) {
  if (y < 0 || y >= g.h || x < 0 || x >= g.w) return;
  t.at[t.count] = static_cast<int32_t>(y * g.w + x);
  t.w[t.count] = static_cast<float>(weight);
  ++t.count;
}

// The corners of grid point (gx, gy), bilinear or nearest.
void corners_of(double gx, double gy, const GridPlan& g, Corners& c) {
  double ddx = 0, ddy = 0;
  const double x = grid::source_coordinate(gx, g.w, g.p, &ddx), y = grid::source_coordinate(gy, g.h, g.p, &ddy);
  c.inside = 0;
  const auto put = [&](int k, int64_t yy, int64_t xx, double weight) {
    const bool inside = yy >= 0 && yy < g.h && xx >= 0 && xx < g.w;
    c.inside |= static_cast<uint8_t>(inside ? 1 << k : 0);
    c.at[k] = inside ? static_cast<int32_t>(yy * g.w + xx) : 0;
    c.w[k] = static_cast<float>(weight);
  };
  if (g.p.mode == GridSampleMode::kNearest) {
    put(0, static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)), 1.0);
    return;
  }
  const double fx = std::floor(x), fy = std::floor(y), tx = x - fx, ty = y - fy;
  const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  c.tx = static_cast<float>(tx);
  c.ty = static_cast<float>(ty);
  c.dgx = static_cast<float>(ddx);
  c.dgy = static_cast<float>(ddy);
  for (int k = 0; k < 4; ++k) {
    const int oy = k >> 1, ox = k & 1;
    put(k, y0 + oy, x0 + ox, (oy ? ty : 1 - ty) * (ox ? tx : 1 - tx));
  }
}

// The taps of grid point (gx, gy).
void taps_of(double gx, double gy, const GridPlan& g, Taps& t) {
  const GridSampleParams& p = g.p;
  t.count = 0;
  double d = 0;
  if (p.mode == GridSampleMode::kBicubic) {
    const double x = grid::unnormalize(gx, g.w, p.align_corners, &d), y = grid::unnormalize(gy, g.h, p.align_corners, &d);
    const double fx = std::floor(x), fy = std::floor(y);
    double wx[4], wy[4];
    grid::cubic_weights(x - fx, wx);
    grid::cubic_weights(y - fy, wy);
    for (int i = 0; i < 4; ++i) {
      const auto ty = static_cast<int64_t>(grid::pad_coordinate(fy - 1 + i, g.h, p, &d));
      for (int j = 0; j < 4; ++j) {
        const auto tx = static_cast<int64_t>(grid::pad_coordinate(fx - 1 + j, g.w, p, &d));
        add_tap(t, ty, tx, wy[i] * wx[j], g);
      }
    }
    return;
  }
  Corners corners;
  corners_of(gx, gy, g, corners);
  for (int k = 0; k < 4; ++k) {
    if (!(corners.inside >> k & 1)) continue;
    t.at[t.count] = corners.at[k];
    t.w[t.count] = corners.w[k];
    ++t.count;
  }
}

// A plane's pixel offsets fit the taps' int32.
bool planes_fit(const pock_tensor_desc& x) { return x.rank == 4 && x.dims[2] * x.dims[3] <= INT32_MAX; }

Status grid_sample(const KernelCall& c, GridPlan& g) {
  const float* grid = c.in_data<float>(1);
  const int64_t chunks = (g.points + kChunk - 1) / kChunk, plane = g.h * g.w;
  const size_t items = static_cast<size_t>(g.n * chunks);
  parallel_for(g.pool, items, balanced_tile(g.pool, items, 1), [&](size_t begin, size_t end) {
    Taps taps[kChunk];
    for (size_t item = begin; item < end; ++item) {
      const int64_t b = static_cast<int64_t>(item) / chunks, first = (static_cast<int64_t>(item) % chunks) * kChunk;
      const int64_t count = std::min(kChunk, g.points - first);
      for (int64_t q = 0; q < count; ++q) {
        const float* at = grid + (b * g.points + first + q) * 2;
        taps_of(at[0], at[1], g, taps[q]);
      }
      for (int64_t ch = 0; ch < g.channels; ++ch) {
        const float* x = c.in_data<float>(0) + (b * g.channels + ch) * plane;
        float* y = c.out_data<float>(0) + (b * g.channels + ch) * g.points + first;
        for (int64_t q = 0; q < count; ++q) {
          const Taps& t = taps[q];
          float sum = 0.0f;
          for (int k = 0; k < t.count; ++k) sum += t.w[k] * x[t.at[k]];
          y[q] = sum;
        }
      }
    }
  });
  return Status::ok();
}

// Bilinear and nearest: the four corners, their weights' slopes against the fractions tx, ty
// (nearest: none, it is piecewise constant in the grid).
void grad_taps_of(double gx, double gy, const GridPlan& g, GradTaps<4>& t) {
  Corners c;
  corners_of(gx, gy, g, c);
  const bool nearest = g.p.mode == GridSampleMode::kNearest;
  t.inside = nearest ? (c.inside & 1) : c.inside;
  for (int k = 0; k < 4; ++k) {
    const int oy = k >> 1, ox = k & 1;
    t.at[k] = c.at[k];
    t.w[k] = c.w[k];
    t.gx[k] = nearest ? 0.0f : (ox ? 1.0f : -1.0f) * (oy ? c.ty : 1 - c.ty) * c.dgx;
    t.gy[k] = nearest ? 0.0f : (oy ? 1.0f : -1.0f) * (ox ? c.tx : 1 - c.tx) * c.dgy;
  }
}

// Bicubic: the 4 x 4 taps (padding moves whole taps, so only the unnormalization has a slope).
void grad_taps_of(double gx, double gy, const GridPlan& g, GradTaps<16>& t) {
  const GridSampleParams& p = g.p;
  double dux = 0, duy = 0, d = 0;
  const double x = grid::unnormalize(gx, g.w, p.align_corners, &dux), y = grid::unnormalize(gy, g.h, p.align_corners, &duy);
  const double fx = std::floor(x), fy = std::floor(y);
  double wx[4], wy[4], dwx[4], dwy[4];
  grid::cubic_weights(x - fx, wx);
  grid::cubic_weights(y - fy, wy);
  grid::cubic_weight_derivatives(x - fx, dwx);
  grid::cubic_weight_derivatives(y - fy, dwy);
  t.inside = 0;
  for (int i = 0; i < 4; ++i) {
    const auto ty = static_cast<int64_t>(grid::pad_coordinate(fy - 1 + i, g.h, p, &d));
    for (int j = 0; j < 4; ++j) {
      const auto tx = static_cast<int64_t>(grid::pad_coordinate(fx - 1 + j, g.w, p, &d));
      const int k = 4 * i + j;
      const bool inside = ty >= 0 && ty < g.h && tx >= 0 && tx < g.w;
      t.inside = static_cast<uint16_t>(t.inside | (inside ? 1 << k : 0));
      t.at[k] = inside ? static_cast<int32_t>(ty * g.w + tx) : 0;
      t.w[k] = static_cast<float>(wy[i] * wx[j]);
      t.gx[k] = static_cast<float>(wy[i] * dwx[j] * dux);
      t.gy[k] = static_cast<float>(dwy[i] * wx[j] * duy);
    }
  }
}

// dgrid of the points [first, first + count) of batch b: the taps' values times dy times their
// weights' derivatives, summed over taps and channels.
template <int K>
void grid_gradient(const KernelCall& c, const GridPlan& g, const GradTaps<K>* taps, int64_t b, int64_t first, int64_t count) {
  double gx[kChunk] = {}, gy[kChunk] = {};
  const int64_t plane = g.h * g.w;
  for (int64_t ch = 0; ch < g.channels; ++ch) {
    const float* x = c.in_data<float>(1) + (b * g.channels + ch) * plane;
    const float* dy = c.in_data<float>(0) + (b * g.channels + ch) * g.points + first;
    for (int64_t q = 0; q < count; ++q) {
      const GradTaps<K>& t = taps[q];
      float sx = 0, sy = 0;
      for (int k = 0; k < K; ++k) {
        if (!(t.inside >> k & 1)) continue;
        sx += t.gx[k] * x[t.at[k]];
        sy += t.gy[k] * x[t.at[k]];
      }
      gx[q] += static_cast<double>(sx) * dy[q];
      gy[q] += static_cast<double>(sy) * dy[q];
    }
  }
  float* dgrid = c.out_data<float>(1) + (b * g.points + first) * 2;
  for (int64_t q = 0; q < count; ++q) {
    dgrid[2 * q] = static_cast<float>(gx[q]);
    dgrid[2 * q + 1] = static_cast<float>(gy[q]);
  }
}

template <int K>
Status grid_sample_grad_taps(const KernelCall& c, GridGradPlan& g) {
  auto* taps = reinterpret_cast<GradTaps<K>*>(g.scope->scratch());
  const float* grid = c.in_data<float>(2);
  const size_t all_points = static_cast<size_t>(g.n * g.points);
  parallel_for(g.pool, all_points, balanced_tile(g.pool, all_points, 256), [&](size_t begin, size_t end) {
    for (size_t q = begin; q < end; ++q) grad_taps_of(grid[2 * q], grid[2 * q + 1], g, taps[q]);
  });
  const int64_t plane = g.h * g.w;
  const size_t planes = static_cast<size_t>(g.n * g.channels);
  parallel_for(g.pool, planes, balanced_tile(g.pool, planes, 1), [&](size_t begin, size_t end) {
    for (size_t pl = begin; pl < end; ++pl) {
      const int64_t b = static_cast<int64_t>(pl) / g.channels;
      float* dx = c.out_data<float>(0) + static_cast<int64_t>(pl) * plane;
      const float* dy = c.in_data<float>(0) + static_cast<int64_t>(pl) * g.points;
      const GradTaps<K>* t = taps + b * g.points;
      std::fill(dx, dx + plane, 0.0f);
      for (int64_t q = 0; q < g.points; ++q) {
        for (int k = 0; k < K; ++k) {
          if (t[q].inside >> k & 1) dx[t[q].at[k]] += t[q].w[k] * dy[q];
        }
      }
    }
  });
  if (g.p.mode == GridSampleMode::kNearest) {  // piecewise constant in the grid
    std::memset(c.out(1).data, 0, static_cast<size_t>(c.out(1).nbytes));
    return Status::ok();
  }
  const int64_t chunks = (g.points + kChunk - 1) / kChunk;
  const size_t items = static_cast<size_t>(g.n * chunks);
  parallel_for(g.pool, items, balanced_tile(g.pool, items, 1), [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      const int64_t b = static_cast<int64_t>(item) / chunks, first = (static_cast<int64_t>(item) % chunks) * kChunk;
      grid_gradient<K>(c, g, taps + b * g.points + first, b, first, std::min(kChunk, g.points - first));
    }
  });
  return Status::ok();
}

Status grid_sample_grad(const KernelCall& c, GridGradPlan& g) {
  return g.p.mode == GridSampleMode::kBicubic ? grid_sample_grad_taps<16>(c, g) : grid_sample_grad_taps<4>(c, g);
}

bool sample_accepts(const pock_op_desc& op) { return planes_fit(op.inputs[0]); }

bool grad_accepts(const pock_op_desc& op) { return planes_fit(op.inputs[1]); }

}  // namespace

void register_grid_sample(KernelTable& t) {
  t.add(prepared_kernel<GridPlan, grid_sample>("GridSample", DType::kF32, kCpuScore, sample_accepts));
  t.add(prepared_kernel<GridGradPlan, grid_sample_grad>("GridSampleGrad", DType::kF32, kCpuScore, grad_accepts));
}

}  // namespace pock::cpu
