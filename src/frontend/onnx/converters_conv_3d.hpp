// ONNX Conv over three spatial axes, built from 2-D convolutions (pock's Conv2d).
#pragma once
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// x [N, C, D, H, W], w [M, C/group, kd, kh, kw], optional bias [M]: for each depth tap i of the
// kernel, the input planes that tap reads (depth i * dilation, then every stride-th, after the
// depth pads) become images of the batch, convolved in 2-D with w[:, :, i]; the taps' results add
// up to y [N, M, Do, Ho, Wo]. Trains through the ops it uses (Slice of the weight included).
Status convert_conv_3d(NodeView& node);

}  // namespace pock::onnx_import
