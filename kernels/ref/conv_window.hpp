// Sliding-window geometry shared by the reference conv/pool kernels and their gradients, from the
// conv family's parameters (kernels/params/conv.hpp), so forward and backward agree by
// construction.
#pragma once
#include <cstdint>

#include "kernels/bf16_round.h"
#include "kernels/params/conv.hpp"
#include "runtime/kernel.hpp"

namespace pock::ref {

// Between a forward input x [N, C, in_h, in_w] and its forward output y [N, O, out_h, out_w]
// (dy has y's shape).
struct Window {
  int64_t batch, in_channels, in_h, in_w, out_channels, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

inline Window window_of(const params::WindowParams& p, const pock_tensor_desc& x, const pock_tensor_desc& y,
                        int64_t kernel_h, int64_t kernel_w) {
  Window w{};
  w.batch = x.dims[0];
  w.in_channels = x.dims[1];
  w.in_h = x.dims[2];
  w.in_w = x.dims[3];
  w.out_channels = y.dims[1];
  w.out_h = y.dims[2];
  w.out_w = y.dims[3];
  w.kernel_h = kernel_h;
  w.kernel_w = kernel_w;
  w.stride_h = p.stride_h;
  w.stride_w = p.stride_w;
  w.dilation_h = p.dilation_h;
  w.dilation_w = p.dilation_w;
  w.pad_top = p.pad_top;
  w.pad_left = p.pad_left;
  w.pad_bottom = p.pad_bottom;
  w.pad_right = p.pad_right;
  return w;
}

// An operand value as a convolution multiplies it: rounded to bf16 under compute "bf16"
// (params::WindowParams::bf16), as it is otherwise.
inline double conv_operand(float v, bool bf16) { return bf16 ? pock_round_bf16(v) : v; }

// Calls f(ky, kx, iy, ix) for each tap (ky, kx) of the window of output (oy, ox) that reads the
// input at (iy, ix); taps in the padding are skipped (they read 0, or a zero point, and add 0).
template <typename F>
void for_each_tap(const Window& g, int64_t oy, int64_t ox, F&& f) {
  for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
    const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
      if (ix < 0 || ix >= g.in_w) continue;
      f(ky, kx, iy, ix);
    }
  }
}

}  // namespace pock::ref
