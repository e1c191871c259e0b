// The shape of one Conv2d (NCHW x, OIHW weight), read once from the bound op and shared by the
// cpu backend's convolution strategies.
#pragma once
#include <cstdint>

#include "ir/activation.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
  bool has_bias = false;
  Activation activation = Activation::kNone;  // fused epilogue, applied after the bias
  bool bf16 = false;                          // compute "bf16" (params/conv.hpp): only conv_bf16.hpp's way

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  int64_t in_plane() const { return in_h * in_w; }
  int64_t out_plane() const { return out_h * out_w; }
  // One output channel per input channel (or a fixed multiple of it): MobileNet's depthwise layer.
  bool is_depthwise() const { return groups > 1 && in_per_group() == 1; }
};

// Reads the geometry of a Conv2d; false when the op is not a well-formed 2-D f32 convolution
// (the schema checked it, this guards the backend against what it does not expect).
bool conv_geometry(const pock_op_desc& op, ConvGeometry* g);
// The part every conv op shares: extents from x [N, C, H, W] and y (or dy) [N, O, OH, OW], the
// kernel extent, and the strides / dilations / pads / groups attributes, with their range checks
// (groups divide the channels, strides and dilations >= 1, pads >= 0, batches agree).
bool read_window(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& y, int64_t kernel_h,
                 int64_t kernel_w, ConvGeometry* g);

}  // namespace pock::cpu
