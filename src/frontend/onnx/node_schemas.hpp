// Every node of a model checked against ONNX's own operator schemas (libonnx) before the importer
// reads it: input and output counts, attribute types, required attributes. The converters and
// folders can then index a node's inputs without re-checking what the spec already fixes.
#pragma once
#include <onnx/onnx_pb.h>

#include "pock/status.hpp"

namespace pock::onnx_import {

// `opset` is the model's default-domain opset. Nodes of other domains are left to the importer,
// which refuses them by name.
Status check_node_schemas(const onnx::GraphProto& graph, int64_t opset);

}  // namespace pock::onnx_import
