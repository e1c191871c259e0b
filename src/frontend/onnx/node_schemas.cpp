#include "frontend/onnx/node_schemas.hpp"

#include <onnx/defs/schema.h>

#include <exception>
#include <string>

namespace pock::onnx_import {

Status check_node_schemas(const onnx::GraphProto& graph, int64_t opset) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
    if (!schema) continue;  // an op ONNX does not define at this opset: the importer names it
    try {
      schema->Verify(node);
    } catch (const std::exception& e) {
      return Status(Code::kInvalidArgument, "node " + std::to_string(i) + " '" + node.name() + "' (" + node.op_type() +
                                                ") does not match ONNX's schema at opset " + std::to_string(opset) + ": " +
                                                e.what());
    }
  }
  return Status::ok();
}

}  // namespace pock::onnx_import
