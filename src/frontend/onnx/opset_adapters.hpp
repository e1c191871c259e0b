// Rewrites the nodes of a model written at any default-domain opset from 7 to 23 into the one form
// that the converters, folders and patterns read, so that none of them checks an opset.
//
// The canonical form: operands are inputs, never attributes (the axes of Squeeze, Unsqueeze and
// the reductions, Split's sizes, Slice's bounds, Pad's pads and value, Clip's bounds, Dropout's
// ratio, TopK's k); Softmax, LogSoftmax and Hardmax work along one axis (opset 13); Split has no
// `num_outputs`, Cast no `saturate`, BatchNormalization no `spatial` and at most three outputs.
// A node whose semantics at its opset pock cannot express is refused, naming the node, the op,
// the opset and what is unsupported: never imported with another meaning.
#pragma once
#include <onnx/onnx_pb.h>

#include "pock/status.hpp"

namespace pock::onnx_import {

constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 23;

// `graph` has passed check_node_schemas at `opset`. Nodes of other domains are copied unchanged.
Result<onnx::GraphProto> adapt_to_canonical(const onnx::GraphProto& graph, int64_t opset);

}  // namespace pock::onnx_import
