// Reference kernels of the conv family: direct loops over NCHW f32, sums in double.
// Attributes were validated by the schema when the graph was built and again when the blob loaded.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/activation.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

int64_t list_value(const KernelCall& c, const char* name, int64_t i, int64_t fallback) {
  const IntSpan list = c.attr_ints(name);
  return i < list.size ? list[i] : fallback;
}

// Window geometry shared by Conv2d and the pools; the output extent comes from the output tensor.
struct Window {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h = 1, dilation_w = 1, pad_top, pad_left;
  int64_t pad_bottom, pad_right;
};

Window window_of(const KernelCall& c, int64_t kernel_h, int64_t kernel_w, int64_t default_stride_h,
                 int64_t default_stride_w) {
  const pock_tensor_desc& x = c.in(0);
  const pock_tensor_desc& y = c.out(0);
  Window w{};
  w.batch = x.dims[0];
  w.channels = x.dims[1];
  w.in_h = x.dims[2];
  w.in_w = x.dims[3];
  w.out_h = y.dims[2];
  w.out_w = y.dims[3];
  w.kernel_h = kernel_h;
  w.kernel_w = kernel_w;
  w.stride_h = list_value(c, "strides", 0, default_stride_h);
  w.stride_w = list_value(c, "strides", 1, default_stride_w);
  w.pad_top = list_value(c, "pads", 0, 0);
  w.pad_left = list_value(c, "pads", 1, 0);
  w.pad_bottom = list_value(c, "pads", 2, 0);
  w.pad_right = list_value(c, "pads", 3, 0);
  return w;
}

Status conv2d(const KernelCall& c) {
  const pock_tensor_desc& wd = c.in(1);
  Window g = window_of(c, wd.dims[2], wd.dims[3], 1, 1);
  g.dilation_h = list_value(c, "dilations", 0, 1);
  g.dilation_w = list_value(c, "dilations", 1, 1);
  const int64_t groups = c.attr_int("groups", 1);
  const int64_t out_channels = c.out(0).dims[1];
  const int64_t in_per_group = wd.dims[1];
  const int64_t out_per_group = out_channels / groups;
  const float* x = c.in_data<float>(0);
  const float* w = c.in_data<float>(1);
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  // The schema admits only known names; parse once, not per element.
  const Activation activation = parse_activation(c.attr_string("activation", "none")).value_or(Activation::kNone);

  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      const int64_t first_in_channel = (o / out_per_group) * in_per_group;
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          double acc = bias ? bias[o] : 0.0;
          for (int64_t ci = 0; ci < in_per_group; ++ci) {
            const float* plane = x + (n * g.channels + first_in_channel + ci) * g.in_h * g.in_w;
            const float* filter = w + (o * in_per_group + ci) * g.kernel_h * g.kernel_w;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
              if (iy < 0 || iy >= g.in_h) continue;
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                if (ix < 0 || ix >= g.in_w) continue;
                acc += static_cast<double>(plane[iy * g.in_w + ix]) * filter[ky * g.kernel_w + kx];
              }
            }
          }
          y[((n * out_channels + o) * g.out_h + oy) * g.out_w + ox] =
              apply_activation(activation, static_cast<float>(acc));
        }
      }
    }
  }
  return Status::ok();
}

Window pool_window(const KernelCall& c) {
  const int64_t kh = list_value(c, "kernel", 0, 1);
  const int64_t kw = list_value(c, "kernel", 1, 1);
  return window_of(c, kh, kw, kh, kw);
}

// Calls f(output_index, plane, y0, y1, x0, x1, oy, ox) per output element with the window clipped
// to the input: rows [y0, y1), columns [x0, x1) of `plane`.
template <typename F>
void for_each_window(const Window& g, const float* x, F&& f) {
  int64_t out = 0;
  for (int64_t plane_index = 0; plane_index < g.batch * g.channels; ++plane_index) {
    const float* plane = x + plane_index * g.in_h * g.in_w;
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

Status max_pool2d(const KernelCall& c) {
  const Window g = pool_window(c);
  float* y = c.out_data<float>(0);
  for_each_window(g, c.in_data<float>(0),
                  [&](int64_t o, const float* plane, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int64_t, int64_t) {
                    float best = -std::numeric_limits<float>::infinity();
                    for (int64_t iy = y0; iy < y1; ++iy) {
                      for (int64_t ix = x0; ix < x1; ++ix) {
                        const float v = plane[iy * g.in_w + ix];
                        if (v > best || std::isnan(v)) best = v;  // NaN propagates, as in PyTorch
                      }
                    }
                    y[o] = best;
                  });
  return Status::ok();
}

Status avg_pool2d(const KernelCall& c) {
  const Window g = pool_window(c);
  const bool count_include_pad = c.attr_int("count_include_pad", 0) != 0;
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
  t.add({"Conv2d", DType::kF32, conv2d});
  t.add({"MaxPool2d", DType::kF32, max_pool2d});
  t.add({"AvgPool2d", DType::kF32, avg_pool2d});
  t.add({"GlobalAvgPool", DType::kF32, global_avg_pool});
}

}  // namespace pock
