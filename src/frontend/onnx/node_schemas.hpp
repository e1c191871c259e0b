// Every node of a model checked against ONNX's operator schemas before the importer reads it:
// input and output counts, attribute names and types, required attributes. The converters and
// folders can then index a node's inputs without re-checking what the spec already fixes.
//
// The schemas come from libonnx for the opsets it knows (1.12: up to 17); for an op that changed
// after that, from newer_schemas.inc (counts and attribute names, generated from a newer onnx).
#pragma once
#include <onnx/onnx_pb.h>

#include "pock/status.hpp"

namespace pock::onnx_import {

// `opset` is the model's default-domain opset. Nodes of other domains are left to the importer,
// which refuses them by name. A default-domain op that ONNX defines only from a later opset than
// the model declares is refused.
Status check_node_schemas(const onnx::GraphProto& graph, int64_t opset);

// A model below `first` (the oldest opset pock imports) is read as written at `first` when each of
// its default-domain ops has the same version at both: the error names the first op that does not.
Status check_unchanged_until(const onnx::GraphProto& graph, int64_t opset, int64_t first);

}  // namespace pock::onnx_import
