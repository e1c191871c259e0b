// ONNX ConvInteger and QLinearConv (1-D and 2-D) onto the quantize_conv family's ops of the same
// names (docs/ops.md), inference only, with Conv's window attributes (auto_pad resolved); a 1-D
// one runs as 2-D with a unit height. ConvInteger's absent zero points stay absent: the kernels
// read them as 0.
#include <string>
#include <vector>

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

// A 1-D convolution's window as the 2-D window over x [N, C, 1, L] (as Conv's 1-D import).
Result<Attrs> window_1d(NodeView& node, const Shape& x, const Shape& w) {
  using Ints = std::vector<int64_t>;
  const NodeAttrs& at = node.attrs();
  POCK_ASSIGN_OR_RETURN(Ints strides, at.get_ints("strides", {1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, at.get_ints("dilations", {1}));
  POCK_ASSIGN_OR_RETURN(Ints kernel, at.get_ints("kernel_shape", {w[2]}));
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, at.get_string("auto_pad", "NOTSET"));
  POCK_ASSIGN_OR_RETURN(int64_t group, at.get_int("group", 1));
  if (strides.size() != 1 || dilations.size() != 1 || kernel != Ints{w[2]}) {
    return node.error("a 1-D convolution needs one stride and one dilation and kernel_shape [" + std::to_string(w[2]) +
                      "], got " + shape_str(strides) + ", " + shape_str(dilations) + " and " + shape_str(kernel));
  }
  Ints pads;
  if (auto_pad == "NOTSET") {
    POCK_ASSIGN_OR_RETURN(Ints given, at.get_ints("pads", {0, 0}));
    if (given.size() != 2) return node.error("pads must have 2 values for a 1-D window, got " + shape_str(given));
    pads = {0, given[0], 0, given[1]};
  } else {
    POCK_ASSIGN_OR_RETURN(pads, window_pads(node, Shape{x[0], x[1], 1, x[2]}, {1, kernel[0]}, {1, strides[0]}, {1, dilations[0]}));
  }
  return Attrs{{"strides", Ints{1, strides[0]}}, {"pads", pads}, {"dilations", Ints{1, dilations[0]}}, {"groups", group}};
}

// Emits `op` over the node's inputs [0, last] as a 2-D convolution of inputs `x` and `w` and binds
// output 0. A 1-D one runs with a unit height (x and w unsqueezed, y squeezed); other ranks are
// refused by name.
Status emit_integer_conv(NodeView& node, const char* op, int x, int w, int last) {
  const Shape& xs = node.value(x).shape;
  const Shape& ws = node.value(w).shape;
  const bool one_d = xs.size() == 3 && ws.size() == 3;
  if (!one_d && (xs.size() != 4 || ws.size() != 4)) {
    return node.unsupported("only 1-D and 2-D integer convolutions are supported, got x " + shape_str(xs) + " and w " +
                            shape_str(ws));
  }
  POCK_ASSIGN_OR_RETURN(Attrs window, one_d ? window_1d(node, xs, ws) : conv2d_window_attrs(node, xs, ws));
  POCK_ASSIGN_OR_RETURN(auto in, inputs(node, 0, last));
  if (!one_d) return node.emit_final(op, in, window);
  const Attrs height{{"axes", std::vector<int64_t>{2}}};
  for (int i : {x, w}) {
    POCK_ASSIGN_OR_RETURN(auto image, node.emit("Unsqueeze", {in[static_cast<size_t>(i)]}, height, i == x ? "x_2d" : "w_2d"));
    in[static_cast<size_t>(i)] = image[0];
  }
  POCK_ASSIGN_OR_RETURN(auto y, node.emit(op, in, window, "conv2d"));
  return node.emit_final("Squeeze", {y[0]}, height);
}

Status convert_conv_integer(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "x"));
  POCK_RETURN_IF_ERROR(require_byte(node, 1, "w"));
  return emit_integer_conv(node, "ConvInteger", 0, 1, 3);
}

Status convert_qlinear_conv(NodeView& node) {
  POCK_RETURN_IF_ERROR(require_byte(node, 0, "x"));
  POCK_RETURN_IF_ERROR(require_byte(node, 3, "w"));
  POCK_RETURN_IF_ERROR(require_byte(node, 7, "y_zero_point"));
  for (int i = 0; i < 8; ++i) {
    if (!node.has_input(i)) return node.input_error(i, "is required by QLinearConv");
  }
  return emit_integer_conv(node, "QLinearConv", 0, 3, 8);
}

}  // namespace

void register_quantize_conv_converters(std::unordered_map<std::string, Converter>& t) {
  t["ConvInteger"] = convert_conv_integer;
  t["QLinearConv"] = convert_qlinear_conv;
}

}  // namespace pock::onnx_import
