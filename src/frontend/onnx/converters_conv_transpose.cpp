// ONNX ConvTranspose (1-D, 2-D and 3-D) -> ConvTranspose2d, plus Add of the bias as [C, 1, 1]
// (docs/ops.md). A 1-D one runs as 2-D with a unit height (x, the weight and y reshaped around
// it); a 3-D one as one 2-D per depth tap of the kernel (converters_conv_transpose_3d.cpp). auto_pad SAME_UPPER / SAME_LOWER and output_shape give the pads ONNX specifies; a pad that
// would be negative at the end becomes output_padding (the rows past the full output are zeros
// either way), one at the start (a shift) is refused.
#include "frontend/onnx/converters_conv_transpose.hpp"

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Result<Ints> sized_ints(NodeView& node, const char* name, Ints fallback) {
  const size_t n = fallback.size();
  POCK_ASSIGN_OR_RETURN(Ints v, node.attrs().get_ints(name, std::move(fallback)));
  if (v.size() != n) return node.error(std::string(name) + " must have " + std::to_string(n) + " values, got " + shape_str(v));
  return v;
}

namespace {

// ONNX's ConvTranspose: with output_shape given, or auto_pad SAME_*, the pads come from
//   total = stride (in - 1) + output_padding + dilation (kernel - 1) + 1 - out
// split in half, the odd one at the end for SAME_UPPER (and output_shape), at the start for
// SAME_LOWER; SAME_* make out = in * stride.
Status derive_pads(NodeView& node, const Shape& x, ConvTransposeWindow* w) {
  const size_t s = w->kernel.size();
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, node.attrs().get_string("auto_pad", "NOTSET"));
  POCK_ASSIGN_OR_RETURN(Ints output_shape, node.attrs().get_ints("output_shape", {}));
  if (auto_pad == "VALID") w->pads.assign(2 * s, 0);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") return node.error("auto_pad '" + auto_pad + "' is not an ONNX value");
  if (!output_shape.empty() && output_shape.size() != s) {
    return node.error("output_shape " + shape_str(output_shape) + " must have " + std::to_string(s) + " values");
  }
  if (!same && output_shape.empty()) return Status::ok();
  for (size_t i = 0; i < s; ++i) {
    const int64_t out = !output_shape.empty() ? output_shape[i] : x[2 + i] * w->strides[i];
    const int64_t total = w->strides[i] * (x[2 + i] - 1) + w->output_padding[i] + w->dilations[i] * (w->kernel[i] - 1) + 1 - out;
    const int64_t half = total / 2;  // toward zero, as ONNX's reference computes it
    int64_t begin = auto_pad == "SAME_LOWER" ? total - half : half;
    int64_t end = total - begin;
    if (begin < 0) {
      return node.unsupported("output_shape " + shape_str(output_shape.empty() ? Ints{out} : output_shape) +
                              " asks for output before the first input position (a negative start pad)");
    }
    if (end < 0) {
      w->output_padding[i] -= end;
      end = 0;
    }
    w->pads[i] = begin;
    w->pads[i + s] = end;
  }
  return Status::ok();
}

// The 1-D and 2-D forms: one ConvTranspose2d (1-D with a unit height).
Result<TensorId> conv_transpose_2d(NodeView& node, ConvTransposeWindow win, int64_t group) {
  const Shape& x = node.value(0).shape;
  const Shape& w = node.value(1).shape;
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId wt, node.input(1));
  const bool one_d = x.size() == 3;
  if (one_d) {  // a unit height in front of the one spatial axis
    POCK_ASSIGN_OR_RETURN(auto x4, node.emit("Reshape", {xt}, Attrs{{"shape", Ints{x[0], x[1], 1, x[2]}}}, "x_2d"));
    POCK_ASSIGN_OR_RETURN(auto w4, node.emit("Reshape", {wt}, Attrs{{"shape", Ints{w[0], w[1], 1, w[2]}}}, "w_2d"));
    xt = x4[0];
    wt = w4[0];
    win.strides.insert(win.strides.begin(), 1);
    win.dilations.insert(win.dilations.begin(), 1);
    win.pads = {0, win.pads[0], 0, win.pads[1]};
    win.output_padding.insert(win.output_padding.begin(), 0);
  }
  const Attrs attrs{{"strides", win.strides}, {"pads", win.pads}, {"dilations", win.dilations}, {"groups", group},
                    {"output_padding", win.output_padding}};
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("ConvTranspose2d", {xt, wt}, attrs, "conv_transpose"));
  if (!one_d) return y[0];
  const Shape y4 = node.ctx().graph.tensor(y[0]).shape;
  POCK_ASSIGN_OR_RETURN(auto y3, node.emit("Reshape", {y[0]}, Attrs{{"shape", Ints{y4[0], y4[1], y4[3]}}}, "y_1d"));
  return y3[0];
}

Status convert_conv_transpose(NodeView& node) {
  const Shape& x = node.value(0).shape;
  const Shape& w = node.value(1).shape;
  if (x.size() < 3 || x.size() > 5) {
    return node.unsupported("only 1-D, 2-D and 3-D transposed convolutions are supported, input is " + shape_str(x));
  }
  const size_t s = x.size() - 2;
  if (w.size() != x.size()) return node.input_error(1, "(weight) must be [C, M/group, k...] of the input's rank, got " + shape_str(w));
  const Ints weight_kernel(w.begin() + 2, w.end());
  ConvTransposeWindow win;
  POCK_ASSIGN_OR_RETURN(win.kernel, sized_ints(node, "kernel_shape", weight_kernel));
  if (win.kernel != weight_kernel) return node.error("kernel_shape " + shape_str(win.kernel) + " differs from the weight " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(win.strides, sized_ints(node, "strides", Ints(s, 1)));
  POCK_ASSIGN_OR_RETURN(win.dilations, sized_ints(node, "dilations", Ints(s, 1)));
  POCK_ASSIGN_OR_RETURN(win.pads, sized_ints(node, "pads", Ints(2 * s, 0)));
  POCK_ASSIGN_OR_RETURN(win.output_padding, sized_ints(node, "output_padding", Ints(s, 0)));
  POCK_RETURN_IF_ERROR(derive_pads(node, x, &win));
  POCK_ASSIGN_OR_RETURN(int64_t group, node.attrs().get_int("group", 1));
  POCK_ASSIGN_OR_RETURN(TensorId y, s == 3 ? convert_conv_transpose_3d(node, win, group) : conv_transpose_2d(node, win, group));
  const Shape out = node.ctx().graph.tensor(y).shape;
  POCK_ASSIGN_OR_RETURN(Ints output_shape, node.attrs().get_ints("output_shape", {}));
  if (!output_shape.empty() && output_shape != Ints(out.begin() + 2, out.end())) {
    return node.error("output_shape " + shape_str(output_shape) + " differs from the " +
                      shape_str(Ints(out.begin() + 2, out.end())) + " that the pads derived from it give");
  }
  if (!node.has_input(2)) return node.bind_output(0, y);
  Ints spatial_axes;
  for (size_t d = 0; d < s; ++d) spatial_axes.push_back(static_cast<int64_t>(1 + d));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
  POCK_ASSIGN_OR_RETURN(auto b_axes, node.emit("Unsqueeze", {b}, Attrs{{"axes", spatial_axes}}, "bias_per_channel"));
  return node.emit_final("Add", {y, b_axes[0]});
}

}  // namespace

void register_conv_transpose_converters(std::unordered_map<std::string, Converter>& t) {
  t["ConvTranspose"] = convert_conv_transpose;
}

}  // namespace pock::onnx_import
