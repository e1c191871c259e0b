// Pooling that pock's 2-D window ops do not take directly, written with them or with
// elementwise ops: 3-D windows (separable: a 2-D pool over H, W, then one over D), dilated
// pooling (the maximum or the mean of one strided slice per window tap) and MaxPool's argmax indices. The
// pooled values train through the ops they use.
#pragma once
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// x [N, C, D, H, W]; kernel, strides, dilations of 3 values, pads (3 begins, 3 ends). `op` is
// MaxPool2d or AvgPool2d: the maximum of maxima and the mean of means are the 3-D window's, also
// where a window overlaps padding (the valid region of a window is a box, so its count factors
// too). A dilated pass is decomposed (frontend/onnx/pool_dilated.hpp).
Status convert_pool_3d(NodeView& node, const char* op, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                       const std::vector<int64_t>& pads);

// MaxPool of x [N, C, H, W] with dilations other than 1 (frontend/onnx/pool_dilated.hpp).
Status convert_max_pool_dilated(NodeView& node, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads);

// AveragePool (float32) of x [N, C, H, W] with dilations other than 1 (opset 19; frontend/onnx/
// pool_dilated.hpp).
Status convert_avg_pool_dilated(NodeView& node, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads);

// MaxPool's output 1 for y of shape `y` (the window of the op that wrote y): the flattened index
// into x of each window's maximum, row-major over [N, C, H, W] (storage_order 1: H and W
// swapped), as int64. The maximum's tap comes from ArgMax over the window's slices, its index
// from a constant table. Not differentiable, as indices are not.
Status convert_max_pool_indices(NodeView& node, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads, const Shape& y);

}  // namespace pock::onnx_import
