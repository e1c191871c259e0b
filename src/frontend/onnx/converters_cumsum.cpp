// ONNX CumSum: pock's CumSum with the axis input (a constant scalar in every exporter's output)
// made its attribute; exclusive and reverse carry over as they are.
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_cumsum(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::vector<int64_t> axis, node.const_ints(1, "axis"));
  if (axis.size() != 1) return node.input_error(1, "(axis) must hold one value, got " + std::to_string(axis.size()));
  POCK_ASSIGN_OR_RETURN(int64_t exclusive, node.attrs().get_int("exclusive", 0));
  POCK_ASSIGN_OR_RETURN(int64_t reverse, node.attrs().get_int("reverse", 0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("CumSum", {x}, Attrs{{"axis", axis[0]}, {"exclusive", exclusive}, {"reverse", reverse}});
}

}  // namespace

void register_cumsum_converters(std::unordered_map<std::string, Converter>& t) { t["CumSum"] = convert_cumsum; }

}  // namespace pock::onnx_import
