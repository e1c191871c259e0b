// Models written below opset 7, the oldest the importer reads (PyTorch's early exports and ONNX's
// stored PyTorch layer tests write opset 6). A model whose ops are the same at 7 is read as is; one
// with ops that changed by 7 (Add/Sub/Mul/Div/Pow with `broadcast` and `axis`, Gemm's `broadcast`,
// BatchNormalization's and Dropout's `is_test`, PRelu before broadcasting, ...) is converted to
// opset 7 by onnx's own version converter, after two rewrites for forms it converts wrongly (PRelu's
// per-channel slope, broadcasting at an `axis` other than 0).
#pragma once
#include <onnx/onnx_pb.h>

#include <optional>

#include "pock/status.hpp"

namespace pock::onnx_import {

// `model` declares default-domain opset `opset` < `target`. nullopt when its ops are unchanged at
// `target` (read it as written at `target`); else the model converted to `target`. Refused, naming
// the node and the reason, when a node does not match ONNX's schema at `opset` or the converter
// cannot convert it.
Result<std::optional<onnx::ModelProto>> upgrade_to_opset(const onnx::ModelProto& model, int64_t opset, int64_t target);

}  // namespace pock::onnx_import
