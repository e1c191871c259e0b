// Dilated 2-D pooling written with pock's general ops, one strided Slice of the padded input per
// window tap: the maximum of the taps (Maximum) or their mean (Add, then Div by a constant count
// per output position). The pooled values train through those ops. Shared by the 2-D and the
// separable 3-D imports of ONNX's MaxPool and AveragePool (converters_pool_decomposed.cpp).
#pragma once
#include <string>
#include <vector>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// A pooled tensor x [N, C, H, W] and the window over its H and W; pads (top, left, bottom, right).
struct DilatedPool {
  TensorId x = kNoTensor;
  Shape shape;
  DType dtype = DType::kF32;
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil_mode = false;
  std::string tag;  // prefix of the emitted nodes' names, unique per pool of one ONNX node
};

// The output extents [out_h, out_w]: with ceil_mode the last window is kept when it starts inside
// the input or its leading padding (the rule of pock's pooling schemas).
Result<std::vector<int64_t>> dilated_output(NodeView& node, const DilatedPool& p);

// One strided slice of the input padded with `pad_value` per window tap, in row-major tap order,
// each [N, C, out_h, out_w]: tap (i, j) holds x[oh * sh - pad_t + i * dh, ow * sw - pad_l + j * dw].
Result<std::vector<TensorId>> window_taps(NodeView& node, const DilatedPool& p, const std::vector<int64_t>& out,
                                          double pad_value);

// The lowest value of `dtype` (-inf; an 8-bit integer's minimum): as padding it never wins a
// maximum, as ONNX leaves padding out of the window.
double lowest_of(DType dtype);

// The window maxima [N, C, out_h, out_w].
Result<TensorId> dilated_max(NodeView& node, const DilatedPool& p);

// The window means (float32): the taps' sum divided by the taps inside the input, or with
// count_include_pad by those inside the padded input: a ceil_mode window's taps past the end
// padding never count, as in ONNX's reference, PyTorch and pock's AvgPool2d (onnxruntime 1.19
// counts them for a dilated window).
Result<TensorId> dilated_mean(NodeView& node, const DilatedPool& p, bool count_include_pad);

}  // namespace pock::onnx_import
