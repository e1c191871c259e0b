// MaxPool / AveragePool over more than two spatial axes, imported as pock's 2-D pooling.
#pragma once
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// Pooling over more than two spatial axes where only two (or fewer) have a real window, the
// others a unit window (kernel 1, stride 1, no padding): jax2onnx writes `reduce_window` on NHWC
// as MaxPool over [1, 1, N, H, W, C] with kernel [1, kh, kw, 1]. The unit-window axes join the
// channels (moved there by a Transpose when they are not already next to them), the 2-D pooling
// runs, and the layout is restored.
// `op` is MaxPool2d or AvgPool2d.
Status convert_pool_unit_axes(NodeView& node, const char* op);

}  // namespace pock::onnx_import
