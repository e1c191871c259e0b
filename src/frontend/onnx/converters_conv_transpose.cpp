// ONNX ConvTranspose (2-D) -> ConvTranspose2d, plus Add of the bias as [C, 1, 1] (docs/ops.md).
// Explicit pads and output_padding only: auto_pad, and an output_shape other than the one the
// pads give, are refused by name.
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

Result<Ints> sized_ints(NodeView& node, const char* name, Ints fallback) {
  const size_t n = fallback.size();
  POCK_ASSIGN_OR_RETURN(Ints v, node.attrs().get_ints(name, std::move(fallback)));
  if (v.size() != n) return node.error(std::string(name) + " must have " + std::to_string(n) + " values, got " + shape_str(v));
  return v;
}

Status convert_conv_transpose(NodeView& node) {
  const Shape& x = node.value(0).shape;
  const Shape& w = node.value(1).shape;
  if (x.size() != 4) return node.unsupported("only 2-D transposed convolutions are supported, input is " + shape_str(x));
  if (w.size() != 4) return node.input_error(1, "(weight) must be [C, M/group, kh, kw], got " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, node.attrs().get_string("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET") return node.unsupported("auto_pad '" + auto_pad + "' (write explicit pads)");
  POCK_ASSIGN_OR_RETURN(Ints kernel, sized_ints(node, "kernel_shape", {w[2], w[3]}));
  if (kernel != Ints{w[2], w[3]}) return node.error("kernel_shape " + shape_str(kernel) + " differs from the weight " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(Ints strides, sized_ints(node, "strides", {1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, sized_ints(node, "dilations", {1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints pads, sized_ints(node, "pads", {0, 0, 0, 0}));
  POCK_ASSIGN_OR_RETURN(Ints output_padding, sized_ints(node, "output_padding", {0, 0}));
  POCK_ASSIGN_OR_RETURN(int64_t group, node.attrs().get_int("group", 1));
  const Attrs attrs{{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"groups", group},
                    {"output_padding", output_padding}};
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId wt, node.input(1));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("ConvTranspose2d", {xt, wt}, attrs, "conv_transpose"));
  const Shape out = node.ctx().graph.tensor(y[0]).shape;
  POCK_ASSIGN_OR_RETURN(Ints output_shape, node.attrs().get_ints("output_shape", {}));
  if (!output_shape.empty() && output_shape != Ints(out.begin() + 2, out.end())) {
    return node.unsupported("output_shape " + shape_str(output_shape) + " differs from the " +
                            shape_str(Ints(out.begin() + 2, out.end())) + " that pads and output_padding give");
  }
  if (!node.has_input(2)) return node.bind_output(0, y[0]);
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
  POCK_ASSIGN_OR_RETURN(auto b3, node.emit("Unsqueeze", {b}, Attrs{{"axes", Ints{1, 2}}}, "bias_per_channel"));
  return node.emit_final("Add", {y[0], b3[0]});
}

}  // namespace

void register_conv_transpose_converters(std::unordered_map<std::string, Converter>& t) {
  t["ConvTranspose"] = convert_conv_transpose;
}

}  // namespace pock::onnx_import
