// Sliding-window geometry shared by the reference conv/pool kernels and their gradients: one
// reading of the strides / pads / dilations attributes, so forward and backward agree by
// construction.
#pragma once
#include <cstdint>

#include "runtime/kernel.hpp"

namespace pock::ref {

inline int64_t list_value(const KernelCall& c, const char* name, int64_t i, int64_t fallback) {
  const IntSpan list = c.attr_ints(name);
  return i < list.size ? list[i] : fallback;
}

// Between a forward input x [N, C, in_h, in_w] and its forward output y [N, O, out_h, out_w]
// (dy has y's shape). Pools have no dilations attribute and read 1.
struct Window {
  int64_t batch, in_channels, in_h, in_w, out_channels, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

inline Window window_of(const KernelCall& c, const pock_tensor_desc& x, const pock_tensor_desc& y, int64_t kernel_h,
                        int64_t kernel_w, int64_t default_stride_h, int64_t default_stride_w) {
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
  w.stride_h = list_value(c, "strides", 0, default_stride_h);
  w.stride_w = list_value(c, "strides", 1, default_stride_w);
  w.dilation_h = list_value(c, "dilations", 0, 1);
  w.dilation_w = list_value(c, "dilations", 1, 1);
  w.pad_top = list_value(c, "pads", 0, 0);
  w.pad_left = list_value(c, "pads", 1, 0);
  w.pad_bottom = list_value(c, "pads", 2, 0);
  w.pad_right = list_value(c, "pads", 3, 0);
  return w;
}

}  // namespace pock::ref
