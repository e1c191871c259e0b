// Typed parameters of the conv family (Conv2d, MaxPool2d, AvgPool2d, GlobalAvgPool) and of its
// gradients (layer_grad_conv), parsed once at prepare by one parser every backend shares: the
// sliding window, groups, the layout and Conv2d's fused activation.
#pragma once
#include <cstdint>

#include "ir/activation.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct WindowParams {
  int64_t kernel_h = 1, kernel_w = 1;  // pools' "kernel"; a convolution's comes from its weight
  int64_t stride_h = 1, stride_w = 1;  // pools default to the kernel
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
  bool nhwc = false;                 // layout "NHWC" (Conv2d); "NCHW" otherwise
  bool count_include_pad = false;    // AvgPool2d(Grad)
  Activation activation = Activation::kNone;  // Conv2d's fused epilogue
  // compute "bf16" (Conv2d and its input and weight gradients): both operands rounded to bf16
  // (kernels/bf16_round.h), f32 products and sums, as the linalg GEMMs' (params/linalg.hpp).
  bool bf16 = false;
};

Status parse(const pock_op_desc& op, WindowParams* out);

}  // namespace pock::params
