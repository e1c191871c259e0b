// ONNX comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), And, Or, Xor, Not and
// BitShift of run-time tensors onto pock's logic family, and CastLike onto Cast. With every input
// known at import they are folded instead (folding_elementwise.cpp, the same element semantics).
#include <string>

#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import {
namespace {

// The ops whose ONNX and pock forms are the same: inputs as they are, no attributes.
Status convert_same(NodeView& node) {
  std::vector<TensorId> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    POCK_ASSIGN_OR_RETURN(TensorId x, node.input(i));
    inputs.push_back(x);
  }
  return node.emit_final(node.op(), std::move(inputs));
}

Status convert_bit_shift(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string direction, node.attrs().get_string("direction", ""));
  if (direction != "LEFT" && direction != "RIGHT") {
    return node.error("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got '" + direction + "'");
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId n, node.input(1));
  return node.emit_final("BitShift", {x, n}, Attrs{{"direction", std::string(direction == "LEFT" ? "left" : "right")}});
}

// CastLike(x, like) = Cast(x, to = like's dtype). Only like's dtype is read, so it may be computed
// at run time: it is not materialized.
Status convert_cast_like(NodeView& node) {
  const DType to = node.value(1).dtype;
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (node.ctx().graph.tensor(x).dtype == to) return node.bind_output(0, x);
  return node.emit_final("Cast", {x}, Attrs{{"to", std::string(dtype_name(to))}});
}

}  // namespace

void register_logic_converters(std::unordered_map<std::string, Converter>& t) {
  for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not"}) {
    t[op] = convert_same;
  }
  t["BitShift"] = convert_bit_shift;
  t["CastLike"] = convert_cast_like;
}

}  // namespace pock::onnx_import
