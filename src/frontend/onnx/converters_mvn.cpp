// ONNX MeanVarianceNormalization as ops pock already trains, following ONNX's function body:
//   y = (x - mean(x)) / (sqrt(mean((x - mean(x))^2)) + 1e-9), means over `axes` (default [0, 2, 3]).
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_mvn(NodeView& node) {
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be f32");
  POCK_ASSIGN_OR_RETURN(std::vector<int64_t> axes, node.attrs().get_ints("axes", {0, 2, 3}));
  const Attrs over_axes{{"axes", axes}, {"keepdims", int64_t{1}}};
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(auto mean, node.emit("ReduceMean", {x}, over_axes, "mean"));
  POCK_ASSIGN_OR_RETURN(auto centred, node.emit("Sub", {x, mean[0]}, {}, "centred"));
  POCK_ASSIGN_OR_RETURN(auto squares, node.emit("Square", {centred[0]}, {}, "squares"));
  POCK_ASSIGN_OR_RETURN(auto variance, node.emit("ReduceMean", {squares[0]}, over_axes, "variance"));
  POCK_ASSIGN_OR_RETURN(auto deviation, node.emit("Sqrt", {variance[0]}, {}, "deviation"));
  POCK_ASSIGN_OR_RETURN(auto divisor, node.emit("ScaleShift", {deviation[0]}, Attrs{{"alpha", 1.0}, {"beta", 1e-9}}, "divisor"));
  return node.emit_final("Div", {centred[0], divisor[0]});
}

}  // namespace

void register_mvn_converters(std::unordered_map<std::string, Converter>& t) { t["MeanVarianceNormalization"] = convert_mvn; }

}  // namespace pock::onnx_import
