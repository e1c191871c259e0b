// ONNX QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger and QLinearMatMul
// onto the quantize family's ops of the same names (docs/ops.md), inference only. An absent zero
// point is a 0 of the dtype ONNX gives it (QuantizeLinear: uint8; the integer products: their
// operand's), so that the pock ops keep their inputs in fixed positions.
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

// A one-element 0 of `dtype` (u8 / i8), added as a constant.
TensorId zero_of(NodeView& node, DType dtype) {
  Graph& g = node.ctx().graph;
  return g.add_constant(g.unique_name(node.op() + "_zero_point"), dtype, Shape{}, std::vector<uint8_t>(1, 0));
}

Status require_byte(NodeView& node, int i, const char* what) {
  const DType d = node.value(i).dtype;
  if (d == DType::kU8 || d == DType::kI8) return Status::ok();
  return node.input_error(i, std::string("(") + what + ") must be uint8 or int8, got " + dtype_name(d) +
                                 " (pock's integer quantization covers those two)");
}

Result<std::vector<TensorId>> inputs_or_zero(NodeView& node, const std::vector<int>& which, const std::vector<DType>& zero_dtypes) {
  std::vector<TensorId> out;
  for (size_t k = 0; k < which.size(); ++k) {
    if (node.has_input(which[k])) {
      POCK_ASSIGN_OR_RETURN(TensorId t, node.input(which[k]));
      out.push_back(t);
    } else {
      out.push_back(zero_of(node, zero_dtypes[k]));
    }
  }
  return out;
}

Result<Attrs> axis_attr(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 1));
  if (node.attrs().has("block_size")) return node.unsupported("blocked quantization (block_size) is not supported");
  return Attrs{{"axis", axis}};
}

Status convert_quantize_linear(NodeView& node) {
  if (node.has_input(2)) POCK_RETURN_IF_ERROR(require_byte(node, 2, "y_zero_point"));
  if (node.has_input(2) && node.attrs().has("output_dtype")) {
    return node.unsupported("output_dtype beside a zero point is not supported");
  }
  POCK_ASSIGN_OR_RETURN(Attrs attrs, axis_attr(node));
  POCK_ASSIGN_OR_RETURN(auto in, inputs_or_zero(node, {0, 1, 2}, {DType::kF32, DType::kF32, DType::kU8}));
  return node.emit_final("QuantizeLinear", in, attrs);
}

Status convert_dequantize_linear(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Attrs attrs, axis_attr(node));
  std::vector<TensorId> in;
  for (int i = 0; i < 3; ++i) {
    if (!node.has_input(i)) continue;
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(i));
    in.push_back(t);
  }
  return node.emit_final("DequantizeLinear", in, attrs);
}

Status convert_dynamic_quantize_linear(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("DynamicQuantizeLinear", {x});
}

Status convert_matmul_integer(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "A"));
  POCK_RETURN_IF_ERROR(require_byte(node, 1, "B"));
  const DType a = node.value(0).dtype, b = node.value(1).dtype;
  POCK_ASSIGN_OR_RETURN(auto in, inputs_or_zero(node, {0, 1, 2, 3}, {a, b, a, b}));
  return node.emit_final("MatMulInteger", in);
}

Status convert_qlinear_matmul(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "a"));
  POCK_RETURN_IF_ERROR(require_byte(node, 3, "b"));
  POCK_RETURN_IF_ERROR(require_byte(node, 7, "y_zero_point"));
  std::vector<TensorId> in;
  for (int i = 0; i < 8; ++i) {
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(i));
    in.push_back(t);
  }
  return node.emit_final("QLinearMatMul", in);
}

}  // namespace

void register_quantize_converters(std::unordered_map<std::string, Converter>& t) {
  t["QuantizeLinear"] = convert_quantize_linear;
  t["DequantizeLinear"] = convert_dequantize_linear;
  t["DynamicQuantizeLinear"] = convert_dynamic_quantize_linear;
  t["MatMulInteger"] = convert_matmul_integer;
  t["QLinearMatMul"] = convert_qlinear_matmul;
}

}  // namespace pock::onnx_import
