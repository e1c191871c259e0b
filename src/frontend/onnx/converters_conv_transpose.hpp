// ONNX ConvTranspose: the window every rank shares, and the 3-D form built from 2-D ones.
#pragma once
#include <vector>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// The int-list attribute `name`, which must have as many values as `fallback` (its default).
Result<std::vector<int64_t>> sized_ints(NodeView& node, const char* name, std::vector<int64_t> fallback);

// One value per spatial axis (pads: all begins, then all ends), after auto_pad and output_shape.
struct ConvTransposeWindow {
  std::vector<int64_t> kernel, strides, dilations, pads, output_padding;
};

// x [N, C, D, H, W], w [C, M/group, kd, kh, kw]: for each depth tap i, a ConvTranspose2d of every
// depth plane of x with w[:, :, i] gives that tap's contribution, which lands at depth
// d * stride + i * dilation of the full output; the taps' planes are spread (zeros between them
// for a stride above 1), shifted into place, summed, and the depth pads cut (or output_padding
// added) as in 2-D. Trains through the ops it uses (Slice of the weight included).
// Returns y [N, M, Dout, Ho, Wo] (no bias).
Result<TensorId> convert_conv_transpose_3d(NodeView& node, const ConvTransposeWindow& window, int64_t group);

}  // namespace pock::onnx_import
