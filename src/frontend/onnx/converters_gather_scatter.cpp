// ONNX GatherElements, ScatterElements (opset 11+, reduction at 16/18) and the deprecated Scatter
// (opset 9-10, ScatterElements without reduction), GatherND and ScatterND: one pock op each, same
// inputs and attributes.
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status require_integer_indices(NodeView& node) {
  const DType t = node.value(1).dtype;
  if (t != DType::kI64 && t != DType::kI32) return node.input_error(1, "(indices) must be int32 or int64");
  return Status::ok();
}

// GatherElements (axis) and GatherND (batch_dims): data, indices and one integer attribute.
template <const char* Op, const char* Attr>
Status convert_gather(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_integer_indices(node));
  POCK_ASSIGN_OR_RETURN(int64_t value, node.attrs().get_int(Attr, 0));
  POCK_ASSIGN_OR_RETURN(TensorId data, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(1));
  return node.emit_final(Op, {data, indices}, Attrs{{Attr, value}});
}

constexpr char kGatherElements[] = "GatherElements", kGatherND[] = "GatherND";
constexpr char kAxis[] = "axis", kBatchDims[] = "batch_dims";

Status convert_scatter_elements(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_integer_indices(node));
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 0));
  POCK_ASSIGN_OR_RETURN(std::string reduction, node.attrs().get_string("reduction", "none"));
  POCK_ASSIGN_OR_RETURN(TensorId data, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId updates, node.input(2));
  return node.emit_final("ScatterElements", {data, indices, updates}, Attrs{{"axis", axis}, {"reduction", reduction}});
}

Status convert_scatter_nd(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_integer_indices(node));
  POCK_ASSIGN_OR_RETURN(std::string reduction, node.attrs().get_string("reduction", "none"));
  POCK_ASSIGN_OR_RETURN(TensorId data, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId updates, node.input(2));
  return node.emit_final("ScatterND", {data, indices, updates}, Attrs{{"reduction", reduction}});
}

}  // namespace

void register_gather_scatter_converters(std::unordered_map<std::string, Converter>& t) {
  t["GatherElements"] = convert_gather<kGatherElements, kAxis>;
  t["ScatterElements"] = convert_scatter_elements;
  t["Scatter"] = convert_scatter_elements;
  t["GatherND"] = convert_gather<kGatherND, kBatchDims>;
  t["ScatterND"] = convert_scatter_nd;
}

}  // namespace pock::onnx_import
