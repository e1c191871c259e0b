// ONNX ConvInteger and QLinearConv (2-D) onto the quantize_conv family's ops of the same names
// (docs/ops.md), inference only, with Conv's window attributes (auto_pad resolved). ConvInteger's
// absent zero points stay absent: the kernels read them as 0.
#include <string>

#include "frontend/onnx/conv_window.hpp"
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status require_byte(NodeView& node, int i, const char* what) {
  const DType d = node.value(i).dtype;
  if (d == DType::kU8 || d == DType::kI8) return Status::ok();
  return node.input_error(i, std::string("(") + what + ") must be uint8 or int8, got " + dtype_name(d) +
                                 " (pock's integer convolutions cover those two)");
}

// The window of a 2-D convolution of input `x` by input `w`; other ranks are refused by name.
Result<Attrs> window_of(NodeView& node, int x, int w) {
  const Shape& xs = node.value(x).shape;
  const Shape& ws = node.value(w).shape;
  if (xs.size() != 4 || ws.size() != 4) {
    return node.unsupported("only 2-D integer convolutions are supported (x [N, C, H, W], w [O, C/group, kh, kw]), got x " +
                            shape_str(xs) + " and w " + shape_str(ws));
  }
  return conv2d_window_attrs(node, xs, ws);
}

// Inputs [first, last] of the node, kNoTensor where one is absent.
Result<std::vector<TensorId>> inputs(NodeView& node, int first, int last) {
  std::vector<TensorId> in;
  for (int i = first; i <= last; ++i) {
    if (!node.has_input(i)) {
      in.push_back(kNoTensor);
      continue;
    }
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(i));
    in.push_back(t);
  }
  while (!in.empty() && in.back() == kNoTensor) in.pop_back();
  return in;
}

Status convert_conv_integer(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "x"));
  POCK_RETURN_IF_ERROR(require_byte(node, 1, "w"));
  POCK_ASSIGN_OR_RETURN(Attrs window, window_of(node, 0, 1));
  POCK_ASSIGN_OR_RETURN(auto in, inputs(node, 0, 3));
  return node.emit_final("ConvInteger", in, window);
}

Status convert_qlinear_conv(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "x"));
  POCK_RETURN_IF_ERROR(require_byte(node, 3, "w"));
  POCK_RETURN_IF_ERROR(require_byte(node, 7, "y_zero_point"));
  POCK_ASSIGN_OR_RETURN(Attrs window, window_of(node, 0, 3));
  POCK_ASSIGN_OR_RETURN(auto in, inputs(node, 0, 8));
  for (int i = 0; i < 8; ++i) {
    if (in.size() <= static_cast<size_t>(i) || in[static_cast<size_t>(i)] == kNoTensor) {
      return node.input_error(i, "is required by QLinearConv");
    }
  }
  return node.emit_final("QLinearConv", in, window);
}

}  // namespace

void register_quantize_conv_converters(std::unordered_map<std::string, Converter>& t) {
  t["ConvInteger"] = convert_conv_integer;
  t["QLinearConv"] = convert_qlinear_conv;
}

}  // namespace pock::onnx_import
