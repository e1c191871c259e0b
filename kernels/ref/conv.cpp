// Reference kernels of the conv family: direct loops over NCHW f32 (Conv2d also NHWC), sums in double
// (Conv2d with compute "bf16": operands rounded to bf16 as they are read).
// Attributes were validated by the schema when the graph was built and again when the blob loaded.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/activation.hpp"
#include "kernels/ref/conv_window.hpp"
#include "kernels/ref/layer_grad.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using ref::Window;
using ref::window_of;

// The NCHW view of an image desc in `layout` (Conv2d attribute "layout": x and y are [N,H,W,C]
// under "NHWC"); only the dims are read from it.
pock_tensor_desc as_nchw(const pock_tensor_desc& t, bool nhwc) {
  pock_tensor_desc v = t;
  if (nhwc) {
    v.dims[1] = t.dims[3];
    v.dims[2] = t.dims[1];
    v.dims[3] = t.dims[2];
  }
  return v;
}

// Element offset of (n, c, y, x) in an image of `channels` x `height` x `width`, either layout.
struct ImageIndex {
  int64_t channels, height, width;
  bool nhwc;
  int64_t operator()(int64_t n, int64_t c, int64_t y, int64_t x) const {
    return nhwc ? ((n * height + y) * width + x) * channels + c : ((n * channels + c) * height + y) * width + x;
  }
};

Status conv2d(const KernelCall& c, const params::WindowParams& p) {
  const pock_tensor_desc& wd = c.in(1);
  // The schema admits only "NCHW" and "NHWC".
  const bool nhwc = p.nhwc;
  Window g = window_of(p, as_nchw(c.in(0), nhwc), as_nchw(c.out(0), nhwc), wd.dims[2], wd.dims[3]);
  const int64_t groups = p.groups;
  const int64_t out_channels = g.out_channels;
  const int64_t in_per_group = wd.dims[1];
  const int64_t out_per_group = out_channels / groups;
  const ImageIndex x_at{g.in_channels, g.in_h, g.in_w, nhwc};
  const ImageIndex y_at{out_channels, g.out_h, g.out_w, nhwc};
  const float* x = c.in_data<float>(0);
  const float* w = c.in_data<float>(1);
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  const Activation activation = p.activation;

  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      const int64_t first_in_channel = (o / out_per_group) * in_per_group;
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          double acc = bias ? bias[o] : 0.0;
          for (int64_t ci = 0; ci < in_per_group; ++ci) {
            const float* filter = w + (o * in_per_group + ci) * g.kernel_h * g.kernel_w;
            ref::for_each_tap(g, oy, ox, [&](int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
              acc += ref::conv_operand(x[x_at(n, first_in_channel + ci, iy, ix)], p.bf16) *
                     ref::conv_operand(filter[ky * g.kernel_w + kx], p.bf16);
            });
          }
          y[y_at(n, o, oy, ox)] = apply_activation(activation, static_cast<float>(acc));
        }
      }
    }
  }
  return Status::ok();
}

Window pool_window(const KernelCall& c, const params::WindowParams& p) {
  return window_of(p, c.in(0), c.out(0), p.kernel_h, p.kernel_w);
}

// Calls f(output_index, plane, y0, y1, x0, x1, oy, ox) per output element with the window clipped
// to the input: rows [y0, y1), columns [x0, x1) of `plane`.
template <typename T, typename F>
void for_each_window(const Window& g, const T* x, F&& f) {
  int64_t out = 0;
  for (int64_t plane_index = 0; plane_index < g.batch * g.in_channels; ++plane_index) {
    const T* plane = x + plane_index * g.in_h * g.in_w;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t top = oy * g.stride_h - g.pad_top;
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const int64_t left = ox * g.stride_w - g.pad_left;
        f(out++, plane, std::max<int64_t>(top, 0), std::min(top + g.kernel_h, g.in_h), std::max<int64_t>(left, 0),
          std::min(left + g.kernel_w, g.in_w), top, left);
      }
    }
  }
}

// T: float, or the 8-bit integers (their maximum is exact; the schema keeps pads below the
// kernel, so no window is padding alone and the initial lowest value never survives).
template <typename T>
Status max_pool2d(const KernelCall& c, const params::WindowParams& p) {
  const Window g = pool_window(c, p);
  T* y = c.out_data<T>(0);
  for_each_window(g, c.in_data<T>(0),
                  [&](int64_t o, const T* plane, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int64_t, int64_t) {
                    T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                  : std::numeric_limits<T>::lowest();
                    for (int64_t iy = y0; iy < y1; ++iy) {
                      for (int64_t ix = x0; ix < x1; ++ix) {
                        const T v = plane[iy * g.in_w + ix];
                        if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
                          if (std::isnan(v)) best = v;  // NaN propagates, as in PyTorch
                        }
                        if (v > best) best = v;
                      }
                    }
                    y[o] = best;
                  });
  return Status::ok();
}

Status avg_pool2d(const KernelCall& c, const params::WindowParams& p) {
  const Window g = pool_window(c, p);
  const bool count_include_pad = p.count_include_pad;
  float* y = c.out_data<float>(0);
  for_each_window(g, c.in_data<float>(0),
                  [&](int64_t o, const float* plane, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int64_t top,
                      int64_t left) {
                    double sum = 0.0;
                    for (int64_t iy = y0; iy < y1; ++iy) {
                      for (int64_t ix = x0; ix < x1; ++ix) sum += plane[iy * g.in_w + ix];
                    }
                    // With count_include_pad the divisor counts the padding but not what ceil_mode
                    // adds past it (PyTorch).
                    int64_t count = (y1 - y0) * (x1 - x0);
                    if (count_include_pad) {
                      const int64_t rows = std::min(top + g.kernel_h, g.in_h + g.pad_bottom) - top;
                      const int64_t cols = std::min(left + g.kernel_w, g.in_w + g.pad_right) - left;
                      count = rows * cols;
                    }
                    y[o] = static_cast<float>(sum / static_cast<double>(count));
                  });
  return Status::ok();
}

Status global_avg_pool(const KernelCall& c) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t planes = x.dims[0] * x.dims[1];
  const int64_t area = x.dims[2] * x.dims[3];
  const float* in = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < area; ++i) sum += in[p * area + i];
    y[p] = area > 0 ? static_cast<float>(sum / static_cast<double>(area)) : 0.0f;
  }
  return Status::ok();
}

}  // namespace

void register_ref_conv(KernelTable& t) {
  t.add(typed_kernel<params::WindowParams, conv2d>("Conv2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, conv2d_grad_input>("ConvTranspose2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, max_pool2d<float>>("MaxPool2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, max_pool2d<uint8_t>>("MaxPool2d", DType::kU8));
  t.add(typed_kernel<params::WindowParams, max_pool2d<int8_t>>("MaxPool2d", DType::kI8));
  t.add(typed_kernel<params::WindowParams, avg_pool2d>("AvgPool2d", DType::kF32));
  t.add({"GlobalAvgPool", DType::kF32, global_avg_pool});
}

}  // namespace pock
