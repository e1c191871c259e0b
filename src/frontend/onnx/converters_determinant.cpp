// ONNX Det: pock's Det, same input and output.
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_det(NodeView& node) {
  if (node.value(0).dtype != DType::kF32) {
    return node.input_error(0, std::string("must be f32, got ") + dtype_name(node.value(0).dtype));
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("Det", {x});
}

}  // namespace

void register_determinant_converters(std::unordered_map<std::string, Converter>& t) { t["Det"] = convert_det; }

}  // namespace pock::onnx_import
