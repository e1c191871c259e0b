// The select node that inlining an If with a run-time condition leaves (control_flow.hpp): both
// branches ran, and each output is Where(cond, then, else). That is the If's meaning only when the
// two branches give that output the same dtype and shape, which is known here and not before.
#include <string>

#include "frontend/onnx/control_flow.hpp"
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_branch_select(NodeView& node) {
  const Value& cond = node.value(0);
  const Value& then_value = node.value(1);
  const Value& else_value = node.value(2);
  if (cond.dtype != DType::kBool || numel(cond.shape) != 1) {
    return node.error("the If's condition must be one bool, got " + std::string(dtype_name(cond.dtype)) +
                      shape_str(cond.shape));
  }
  if (then_value.dtype != else_value.dtype || then_value.shape != else_value.shape) {
    return node.unsupported("the If's condition is computed at run time, so pock runs both branches and selects; "
                            "that needs one type per output, but then_branch gives " +
                            std::string(dtype_name(then_value.dtype)) + shape_str(then_value.shape) +
                            " and else_branch " + dtype_name(else_value.dtype) + shape_str(else_value.shape));
  }
  if (auto known = node.scalar_input(0)) {
    POCK_ASSIGN_OR_RETURN(TensorId chosen, node.input(*known != 0 ? 1 : 2));
    return node.bind_output(0, chosen);
  }
  POCK_ASSIGN_OR_RETURN(TensorId c, node.input(0));
  if (cond.shape.size() > then_value.shape.size()) {  // a [1] condition must not widen a scalar output
    POCK_ASSIGN_OR_RETURN(std::vector<TensorId> scalar, node.emit("Reshape", {c}, Attrs{{"shape", Shape{}}}, "cond"));
    c = scalar[0];
  }
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
  return node.emit_final("Where", {c, a, b});
}

}  // namespace

void register_control_flow_converters(std::unordered_map<std::string, Converter>& t) {
  t[kBranchSelectOp] = convert_branch_select;
}

}  // namespace pock::onnx_import
