#include "frontend/onnx/conv_window.hpp"

#include <algorithm>
#include <string>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Result<Ints> window_pads(NodeView& node, const Shape& x, const Ints& kernel, const Ints& strides, const Ints& dilations) {
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, node.attrs().get_string("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET") {
    POCK_ASSIGN_OR_RETURN(Ints pads, node.attrs().get_ints("pads", {0, 0, 0, 0}));
    if (pads.size() != 4) return node.error("pads must have 4 values for a 2-D window, got " + shape_str(pads));
    return pads;
  }
  if (auto_pad == "VALID") return Ints{0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return node.error("unknown auto_pad '" + auto_pad + "'");
  Ints pads(4, 0);
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d];
    const int64_t out = (in + strides[d] - 1) / strides[d];
    const int64_t extent = (kernel[d] - 1) * dilations[d] + 1;
    const int64_t total = std::max<int64_t>((out - 1) * strides[d] + extent - in, 0);
    const int64_t small = total / 2, large = total - small;
    pads[d] = auto_pad == "SAME_UPPER" ? small : large;
    pads[d + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

Result<Ints> pair_attr(NodeView& node, const char* name, Ints fallback) {
  POCK_ASSIGN_OR_RETURN(Ints v, node.attrs().get_ints(name, fallback));
  if (v.size() != 2) return node.error(std::string(name) + " must have 2 values for a 2-D op, got " + shape_str(v));
  return v;
}

Result<Attrs> conv2d_window_attrs(NodeView& node, const Shape& x, const Shape& w) {
  POCK_ASSIGN_OR_RETURN(Ints strides, pair_attr(node, "strides", {1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, pair_attr(node, "dilations", {1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints kernel, pair_attr(node, "kernel_shape", {w[2], w[3]}));
  if (kernel != Ints{w[2], w[3]}) return node.error("kernel_shape " + shape_str(kernel) + " differs from the weight " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(Ints pads, window_pads(node, x, kernel, strides, dilations));
  POCK_ASSIGN_OR_RETURN(int64_t group, node.attrs().get_int("group", 1));
  return Attrs{{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"groups", group}};
}

}  // namespace pock::onnx_import
