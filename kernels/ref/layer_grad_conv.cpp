// Reference kernels of the conv backward ops: direct loops over NCHW f32 (compute "bf16": operands
// rounded to bf16 as they are read). Where an output element gathers its terms (dx of a
// convolution, dw, db, dx of an average pool) it sums them in double;
// MaxPool2dGrad scatters, because only the window's own scan knows where its maximum is.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/ref/conv_window.hpp"
#include "kernels/ref/layer_grad.hpp"

namespace pock {
namespace {

using ref::Window;
using ref::window_of;

// The output position whose kernel tap `k` lands on input position `i`, or -1 when none does:
// i = o * stride - pad + k * dilation.
int64_t output_at(int64_t i, int64_t k, int64_t stride, int64_t pad, int64_t dilation, int64_t out_extent) {
  const int64_t t = i + pad - k * dilation;
  if (t < 0 || t % stride != 0 || t / stride >= out_extent) return -1;
  return t / stride;
}

}  // namespace

// Conv2dGradInput(dy, w) -> dx: every input pixel sums dy * w over the taps that read it.
Status conv2d_grad_input(const KernelCall& c, const params::WindowParams& p) {
  const pock_tensor_desc& wd = c.in(1);
  const Window g = window_of(p, c.out(0), c.in(0), wd.dims[2], wd.dims[3]);
  const int64_t groups = p.groups;
  const int64_t in_per_group = wd.dims[1];
  const int64_t out_per_group = g.out_channels / groups;
  const float* dy = c.in_data<float>(0);
  const float* w = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);

  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ch = 0; ch < g.in_channels; ++ch) {
      const int64_t group = ch / in_per_group, ci = ch % in_per_group;
      for (int64_t iy = 0; iy < g.in_h; ++iy) {
        for (int64_t ix = 0; ix < g.in_w; ++ix) {
          double acc = 0.0;
          for (int64_t o = group * out_per_group; o < (group + 1) * out_per_group; ++o) {
            const float* grad_plane = dy + (n * g.out_channels + o) * g.out_h * g.out_w;
            const float* filter = w + (o * in_per_group + ci) * g.kernel_h * g.kernel_w;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              const int64_t oy = output_at(iy, ky, g.stride_h, g.pad_top, g.dilation_h, g.out_h);
              if (oy < 0) continue;
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                const int64_t ox = output_at(ix, kx, g.stride_w, g.pad_left, g.dilation_w, g.out_w);
                if (ox < 0) continue;
                acc += ref::conv_operand(grad_plane[oy * g.out_w + ox], p.bf16) *
                       ref::conv_operand(filter[ky * g.kernel_w + kx], p.bf16);
              }
            }
          }
          dx[((n * g.in_channels + ch) * g.in_h + iy) * g.in_w + ix] = static_cast<float>(acc);
        }
      }
    }
  }
  return Status::ok();
}

namespace {

// Conv2dGradWeight(x, dy) -> dw for the first `channels` output channels (dw's leading extent).
Status conv2d_grad_weight(const KernelCall& c, const params::WindowParams& p) {
  const pock_tensor_desc& dwd = c.out(0);
  const Window g = window_of(p, c.in(0), c.in(1), dwd.dims[2], dwd.dims[3]);
  const int64_t groups = p.groups;
  const int64_t channels = dwd.dims[0];
  const int64_t in_per_group = dwd.dims[1];
  const int64_t out_per_group = g.out_channels / groups;
  const float* x = c.in_data<float>(0);
  const float* dy = c.in_data<float>(1);
  float* dw = c.out_data<float>(0);

  for (int64_t o = 0; o < channels; ++o) {
    const int64_t first_in_channel = (o / out_per_group) * in_per_group;
    for (int64_t ci = 0; ci < in_per_group; ++ci) {
      for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
          double acc = 0.0;
          for (int64_t n = 0; n < g.batch; ++n) {
            const float* plane = x + (n * g.in_channels + first_in_channel + ci) * g.in_h * g.in_w;
            const float* grad_plane = dy + (n * g.out_channels + o) * g.out_h * g.out_w;
            for (int64_t oy = 0; oy < g.out_h; ++oy) {
              const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
              if (iy < 0 || iy >= g.in_h) continue;
              for (int64_t ox = 0; ox < g.out_w; ++ox) {
                const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                if (ix < 0 || ix >= g.in_w) continue;
                acc += ref::conv_operand(plane[iy * g.in_w + ix], p.bf16) *
                       ref::conv_operand(grad_plane[oy * g.out_w + ox], p.bf16);
              }
            }
          }
          dw[((o * in_per_group + ci) * g.kernel_h + ky) * g.kernel_w + kx] = static_cast<float>(acc);
        }
      }
    }
  }
  return Status::ok();
}

// Conv2dGradBias(dy [N, O, ...]) -> db: dy summed over all axes but 1, first `channels` only.
Status conv2d_grad_bias(const KernelCall& c) {
  const pock_tensor_desc& dyd = c.in(0);
  const int64_t batch = dyd.dims[0], out_channels = dyd.dims[1];
  const int64_t area = out_channels > 0 && batch > 0 ? numel(dyd) / (batch * out_channels) : 0;
  const int64_t channels = c.out(0).dims[0];
  const float* dy = c.in_data<float>(0);
  float* db = c.out_data<float>(0);
  for (int64_t o = 0; o < channels; ++o) {
    double acc = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < area; ++i) acc += dy[(n * out_channels + o) * area + i];
    }
    db[o] = static_cast<float>(acc);
  }
  return Status::ok();
}

Window pool_window(const params::WindowParams& p, const pock_tensor_desc& x, const pock_tensor_desc& y) {
  return window_of(p, x, y, p.kernel_h, p.kernel_w);
}

// MaxPool2dGrad(dy, x) -> dx: each window's dy goes to the element the forward pass picked, found
// by the same scan (first maximum; NaN wins, as in PyTorch). Overlapping windows add up.
Status max_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = pool_window(p, c.in(1), c.in(0));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  const int64_t plane_size = g.in_h * g.in_w;
  std::memset(dx, 0, static_cast<size_t>(numel(c.out(0))) * sizeof(float));
  int64_t out = 0;
  for (int64_t plane = 0; plane < g.batch * g.in_channels; ++plane) {
    const float* xp = x + plane * plane_size;
    float* dxp = dx + plane * plane_size;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t top = oy * g.stride_h - g.pad_top;
      const int64_t y0 = std::max<int64_t>(top, 0), y1 = std::min(top + g.kernel_h, g.in_h);
      for (int64_t ox = 0; ox < g.out_w; ++ox, ++out) {
        const int64_t left = ox * g.stride_w - g.pad_left;
        const int64_t x0 = std::max<int64_t>(left, 0), x1 = std::min(left + g.kernel_w, g.in_w);
        if (y0 >= y1 || x0 >= x1) continue;  // the schema rules this out; never index outside
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_at = y0 * g.in_w + x0;
        for (int64_t iy = y0; iy < y1; ++iy) {
          for (int64_t ix = x0; ix < x1; ++ix) {
            const float v = xp[iy * g.in_w + ix];
            if (v > best || std::isnan(v)) {
              best = v;
              best_at = iy * g.in_w + ix;
            }
          }
        }
        dxp[best_at] += dy[out];
      }
    }
  }
  return Status::ok();
}

// The divisor the forward AvgPool2d used for the window at (top, left): the real elements, or
// with count_include_pad the window clipped to the padded input (not to what ceil_mode adds).
int64_t avg_divisor(const Window& g, bool count_include_pad, int64_t top, int64_t left) {
  if (count_include_pad) {
    const int64_t rows = std::min(top + g.kernel_h, g.in_h + g.pad_bottom) - top;
    const int64_t cols = std::min(left + g.kernel_w, g.in_w + g.pad_right) - left;
    return rows * cols;
  }
  const int64_t rows = std::min(top + g.kernel_h, g.in_h) - std::max<int64_t>(top, 0);
  const int64_t cols = std::min(left + g.kernel_w, g.in_w) - std::max<int64_t>(left, 0);
  return rows * cols;
}

// AvgPool2dGrad(dy) -> dx: every input pixel sums dy / divisor over the windows that cover it.
// Windows start at o * stride - pad, so those covering i are the last one starting at or before
// i and its predecessors, as long as they still reach i.
Status avg_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = pool_window(p, c.out(0), c.in(0));
  const bool count_include_pad = p.count_include_pad;
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  for (int64_t plane = 0; plane < g.batch * g.in_channels; ++plane) {
    const float* grad_plane = dy + plane * g.out_h * g.out_w;
    for (int64_t iy = 0; iy < g.in_h; ++iy) {
      for (int64_t ix = 0; ix < g.in_w; ++ix) {
        double acc = 0.0;
        for (int64_t oy = std::min(g.out_h - 1, (iy + g.pad_top) / g.stride_h);
             oy >= 0 && oy * g.stride_h - g.pad_top + g.kernel_h > iy; --oy) {
          for (int64_t ox = std::min(g.out_w - 1, (ix + g.pad_left) / g.stride_w);
               ox >= 0 && ox * g.stride_w - g.pad_left + g.kernel_w > ix; --ox) {
            const int64_t divisor =
                avg_divisor(g, count_include_pad, oy * g.stride_h - g.pad_top, ox * g.stride_w - g.pad_left);
            acc += static_cast<double>(grad_plane[oy * g.out_w + ox]) / static_cast<double>(divisor);
          }
        }
        dx[(plane * g.in_h + iy) * g.in_w + ix] = static_cast<float>(acc);
      }
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_conv_grad(KernelTable& t) {
  t.add(typed_kernel<params::WindowParams, conv2d_grad_input>("Conv2dGradInput", DType::kF32));
  t.add(typed_kernel<params::WindowParams, conv2d_grad_weight>("Conv2dGradWeight", DType::kF32));
  t.add({"Conv2dGradBias", DType::kF32, conv2d_grad_bias});
  t.add(typed_kernel<params::WindowParams, max_pool2d_grad>("MaxPool2dGrad", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d_grad>("AvgPool2dGrad", DType::kF32));
}

}  // namespace pock
