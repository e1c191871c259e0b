// Per-element logic of the CUDA conv family's own kernels (conv.cu, layer_grad_conv.cu): Conv2d's
// bias and activation epilogue after cuDNN, the pools and their gradients, GlobalAvgPool and
// Conv2dGradBias as team sums. Shared with the host tests (tests/cuda_logic), which compare it
// with kernels/ref. The window geometry is ref's own (kernels/ref/conv_window.hpp: a plain
// struct of extents), so every backend slides the same windows.
#pragma once
#include <climits>
#include <cmath>
#include <cstdint>

#include "ir/activation.hpp"
#include "kernels/cuda/activation_epilogue.hpp"
#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/row_team.hpp"
#include "kernels/params/conv.hpp"
#include "kernels/ref/conv_window.hpp"

namespace pock::cuda {

using ref::Window;

// y = activation(y + bias[channel]) in place over cuDNN's NCHW output.
struct ConvEpilogue {
  float* y;
  const float* bias;  // null: none
  int64_t channels, area;
  Activation activation;
  POCK_HD void operator()(int64_t i) const {
    const float b = bias ? bias[(i / area) % channels] : 0.0f;
    y[i] = activate(activation, y[i] + b);
  }
};

// cuDNN runs in NCHW. An NHWC Conv2d, or a convolution whose padding cuDNN cannot express
// (cuDNN pads both sides alike), goes through a copy of x: NCHW, zero-padded as ref pads it.
struct NchwExtents {
  int64_t n, c, h, w;
  // The NCHW offset of NHWC element i.
  POCK_HD int64_t nchw_of(int64_t i) const {
    const int64_t ch = i % c, x = (i / c) % w, y = (i / (c * w)) % h, b = i / (c * w * h);
    return ((b * c + ch) * h + y) * w + x;
  }
};

// Element i of the padded NCHW copy [n, c, top + h + bottom, left + w + right] of x (NCHW or NHWC).
struct ImageToPaddedNchw {
  const float* x;
  float* out;
  NchwExtents from;
  bool nhwc;
  int64_t top, left, out_h, out_w;
  POCK_HD void operator()(int64_t i) const {
    const int64_t ox = i % out_w, oy = (i / out_w) % out_h, ch = (i / (out_w * out_h)) % from.c;
    const int64_t b = i / (out_w * out_h * from.c), sy = oy - top, sx = ox - left;
    const bool inside = sy >= 0 && sy < from.h && sx >= 0 && sx < from.w;
    const int64_t at = nhwc ? ((b * from.h + sy) * from.w + sx) * from.c + ch : ((b * from.c + ch) * from.h + sy) * from.w + sx;
    out[i] = inside ? x[at] : 0.0f;
  }
};

// Conv2dGradInput through the padded copy: dx [n, c, h, w] is the padded gradient's interior.
struct CropPadded {
  const float* padded;
  float* dx;
  NchwExtents to;
  int64_t top, left, padded_h, padded_w;
  POCK_HD void operator()(int64_t i) const {
    const int64_t x = i % to.w, y = (i / to.w) % to.h, plane = i / (to.w * to.h);
    dx[i] = padded[(plane * padded_h + y + top) * padded_w + x + left];
  }
};

// y (NHWC) = activation(conv (NCHW) + bias[channel]).
struct NhwcEpilogue {
  const float* conv;
  const float* bias;  // null: none
  float* y;
  NchwExtents e;  // of y
  Activation activation;
  POCK_HD void operator()(int64_t i) const { y[i] = activate(activation, conv[e.nchw_of(i)] + (bias ? bias[i % e.c] : 0.0f)); }
};

// The window of output element o (planes of out_h x out_w, planes = batch * channels), clipped
// to the input: rows [y0, y1), columns [x0, x1); top and left unclipped.
struct PoolSpan {
  int64_t plane, top, left, y0, y1, x0, x1;
};

POCK_HD PoolSpan pool_span(const Window& g, int64_t o) {
  PoolSpan s;
  const int64_t ox = o % g.out_w, oy = (o / g.out_w) % g.out_h;
  s.plane = o / (g.out_w * g.out_h);
  s.top = oy * g.stride_h - g.pad_top;
  s.left = ox * g.stride_w - g.pad_left;
  s.y0 = s.top > 0 ? s.top : 0;
  s.y1 = s.top + g.kernel_h < g.in_h ? s.top + g.kernel_h : g.in_h;
  s.x0 = s.left > 0 ? s.left : 0;
  s.x1 = s.left + g.kernel_w < g.in_w ? s.left + g.kernel_w : g.in_w;
  return s;
}

// The element of x (index into the whole tensor) the forward max picks for output o: the first
// maximum in row-major window order, a NaN winning, as ref.
POCK_HD int64_t max_pool_pick(const Window& g, const float* x, int64_t o) {
  const PoolSpan s = pool_span(g, o);
  const int64_t plane = s.plane * g.in_h * g.in_w;
  float best = -INFINITY;
  int64_t best_at = plane + s.y0 * g.in_w + s.x0;
  for (int64_t iy = s.y0; iy < s.y1; ++iy) {
    for (int64_t ix = s.x0; ix < s.x1; ++ix) {
      const float v = x[plane + iy * g.in_w + ix];
      if (v > best || v != v) {  // v != v: NaN, on host and device alike
        best = v;
        best_at = plane + iy * g.in_w + ix;
      }
    }
  }
  return best_at;
}

struct MaxPoolElement {
  const float* x;
  float* y;
  Window g;
  POCK_HD void operator()(int64_t o) const { y[o] = x[max_pool_pick(g, x, o)]; }
};

// MaxPool2dGrad for input element i: dy of every window that covers it and picked it, added in
// increasing window order, as ref scatters them, so dx is ref's bit for bit without atomics.
// The windows covering row iy are those with oy * stride - pad in (iy - kernel, iy].
struct MaxPoolGradElement {
  const float* dy;
  const float* x;
  float* dx;
  Window g;
  POCK_HD static int64_t first_window(int64_t i, int64_t pad, int64_t kernel, int64_t stride) {
    const int64_t reach = i + pad - kernel + 1;  // the first start that still covers i
    return reach <= 0 ? 0 : (reach + stride - 1) / stride;
  }
  POCK_HD void operator()(int64_t i) const {
    const int64_t ix = i % g.in_w, iy = (i / g.in_w) % g.in_h, plane = i / (g.in_w * g.in_h);
    const int64_t last_oy = (iy + g.pad_top) / g.stride_h, last_ox = (ix + g.pad_left) / g.stride_w;
    float acc = 0.0f;
    for (int64_t oy = first_window(iy, g.pad_top, g.kernel_h, g.stride_h); oy <= last_oy && oy < g.out_h; ++oy) {
      for (int64_t ox = first_window(ix, g.pad_left, g.kernel_w, g.stride_w); ox <= last_ox && ox < g.out_w; ++ox) {
        const int64_t o = (plane * g.out_h + oy) * g.out_w + ox;
        if (max_pool_pick(g, x, o) == i) acc += dy[o];
      }
    }
    dx[i] = acc;
  }
};

// AvgPool2d's divisor for the window at (top, left): the real elements, or with
// count_include_pad the window clipped to the padded input (not to what ceil_mode adds past it).
POCK_HD int64_t avg_pool_divisor(const Window& g, bool count_include_pad, int64_t top, int64_t left) {
  const int64_t bottom = top + g.kernel_h, right = left + g.kernel_w;
  if (count_include_pad) {
    const int64_t padded_h = g.in_h + g.pad_bottom, padded_w = g.in_w + g.pad_right;
    return ((bottom < padded_h ? bottom : padded_h) - top) * ((right < padded_w ? right : padded_w) - left);
  }
  const int64_t rows = (bottom < g.in_h ? bottom : g.in_h) - (top > 0 ? top : 0);
  const int64_t cols = (right < g.in_w ? right : g.in_w) - (left > 0 ? left : 0);
  return rows * cols;
}

struct AvgPoolElement {
  const float* x;
  float* y;
  Window g;
  bool count_include_pad;
  POCK_HD void operator()(int64_t o) const {
    const PoolSpan s = pool_span(g, o);
    const float* plane = x + s.plane * g.in_h * g.in_w;
    float sum = 0.0f;
    for (int64_t iy = s.y0; iy < s.y1; ++iy) {
      for (int64_t ix = s.x0; ix < s.x1; ++ix) sum += plane[iy * g.in_w + ix];
    }
    y[o] = sum / static_cast<float>(avg_pool_divisor(g, count_include_pad, s.top, s.left));
  }
};

// AvgPool2dGrad for input element i: the sum of dy / divisor over the windows that cover it. The
// windows covering row iy start at oy * stride - pad <= iy and end past it: the last such oy and
// its predecessors while they still reach iy (the same walk as ref).
struct AvgPoolGradElement {
  const float* dy;
  float* dx;
  Window g;
  bool count_include_pad;
  POCK_HD void operator()(int64_t i) const {
    const int64_t ix = i % g.in_w, iy = (i / g.in_w) % g.in_h, plane = i / (g.in_w * g.in_h);
    const float* grad = dy + plane * g.out_h * g.out_w;
    float acc = 0.0f;
    const int64_t last_oy = (iy + g.pad_top) / g.stride_h, last_ox = (ix + g.pad_left) / g.stride_w;
    for (int64_t oy = last_oy < g.out_h - 1 ? last_oy : g.out_h - 1; oy >= 0 && oy * g.stride_h - g.pad_top + g.kernel_h > iy;
         --oy) {
      for (int64_t ox = last_ox < g.out_w - 1 ? last_ox : g.out_w - 1;
           ox >= 0 && ox * g.stride_w - g.pad_left + g.kernel_w > ix; --ox) {
        const int64_t divisor = avg_pool_divisor(g, count_include_pad, oy * g.stride_h - g.pad_top, ox * g.stride_w - g.pad_left);
        acc += grad[oy * g.out_w + ox] / static_cast<float>(divisor);
      }
    }
    dx[i] = acc;
  }
};

// GlobalAvgPool: a team per plane of `area` values.
struct GlobalAvgPoolPlane {
  const float* x;
  float* y;
  int64_t area;
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t plane) const {
    float sum = 0.0f;
    for_lanes(team, area, [&](int64_t i) { sum += x[plane * area + i]; });
    sum = team.sum(sum);
    if (team.lane == 0) y[plane] = area > 0 ? sum / static_cast<float>(area) : 0.0f;
  }
};

// Conv2dGradBias: a team per output channel o < db's extent sums dy [N, O, area] over N and area.
struct ConvBiasGradChannel {
  const float* dy;
  float* db;
  ChannelView view;
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t o) const {
    float sum = 0.0f;
    view.for_each(team, o, [&](int64_t i) { sum += dy[i]; });
    sum = team.sum(sum);
    if (team.lane == 0) db[o] = sum;
  }
};

// The convolution x [n, c, h, w] * w [o, c / groups, kh, kw] -> y [n, o, oh, ow], NCHW, as the
// cuDNN plans (conv_plan.hpp) see it.
struct ConvShapes {
  int64_t n, c, h, w, o, kh, kw, oh, ow;
};

// cuDNN's output extent for one axis: the same padding on both sides.
inline int64_t cudnn_extent(int64_t input, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad) {
  return (input + 2 * pad - ((kernel - 1) * dilation + 1)) / stride + 1;
}

// Whether cuDNN computes exactly ref's convolution (in NCHW: NHWC goes through the layout passes
// above): nothing empty, every extent an int, and
// cuDNN's symmetric padding (top, left) giving y's extents, in which case every window is ref's
// whatever pad_bottom and pad_right are (the windows start at o * stride - pad_top and all fit).
inline bool cudnn_conv_fits(const ConvShapes& s, const params::WindowParams& p) {
  for (int64_t v : {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.oh, s.ow, p.groups}) {
    if (v <= 0 || v > INT_MAX) return false;
  }
  if (s.n * s.c * s.h * s.w > INT_MAX || s.n * s.o * s.oh * s.ow > INT_MAX) return false;
  if (s.c % p.groups != 0 || s.o % p.groups != 0) return false;
  return cudnn_extent(s.h, s.kh, p.stride_h, p.dilation_h, p.pad_top) == s.oh &&
         cudnn_extent(s.w, s.kw, p.stride_w, p.dilation_w, p.pad_left) == s.ow;
}

// How cuDNN is given a convolution: with its own symmetric padding where that gives ref's
// windows, otherwise on the zero-padded copy of x (and of dx) with no padding of its own.
struct CudnnGeometry {
  bool padded = false;
  ConvShapes shapes{};            // what cuDNN sees
  params::WindowParams params{};  // its padding: (top, left), or none
};

inline bool cudnn_geometry(const ConvShapes& s, const params::WindowParams& p, CudnnGeometry* out) {
  if (cudnn_conv_fits(s, p)) {
    *out = {false, s, p};
    return true;
  }
  CudnnGeometry g{true, s, p};
  g.shapes.h += p.pad_top + p.pad_bottom;
  g.shapes.w += p.pad_left + p.pad_right;
  g.params.pad_top = g.params.pad_left = g.params.pad_bottom = g.params.pad_right = 0;
  if (!cudnn_conv_fits(g.shapes, g.params)) return false;
  *out = g;
  return true;
}

}  // namespace pock::cuda
