// The window attributes of ONNX's 2-D convolutions and pools (strides, dilations, pads with
// auto_pad resolved, group) read into pock's Conv2d / pool attributes, shared by every converter
// of a windowed op so that they read them alike.
#pragma once
#include <vector>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// Explicit pads (top, left, bottom, right) for a 2-D window over x [N, C, H, W], resolving auto_pad.
Result<std::vector<int64_t>> window_pads(NodeView& node, const Shape& x, const std::vector<int64_t>& kernel,
                                         const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

// A list attribute of 2 values (a 2-D op's), or `fallback` when absent.
Result<std::vector<int64_t>> pair_attr(NodeView& node, const char* name, std::vector<int64_t> fallback);

// Conv2d's strides, pads, dilations and groups for a 2-D convolution node (Conv, ConvInteger,
// QLinearConv) of x [N, C, H, W] by w [O, C / group, kh, kw]; kernel_shape, when given, must
// match w.
Result<Attrs> conv2d_window_attrs(NodeView& node, const Shape& x, const Shape& w);

}  // namespace pock::onnx_import
