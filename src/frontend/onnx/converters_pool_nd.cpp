#include "frontend/onnx/converters_pool_nd.hpp"

#include "frontend/onnx/converters_pool_decomposed.hpp"

#include <algorithm>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Status convert_pool_unit_axes(NodeView& node, const char* op) {
  const Shape& x = node.value(0).shape;
  const size_t s = x.size() - 2;
  const NodeAttrs& at = node.attrs();
  POCK_ASSIGN_OR_RETURN(Ints kernel, at.get_ints("kernel_shape", {}));
  POCK_ASSIGN_OR_RETURN(Ints strides, at.get_ints("strides", Ints(s, 1)));
  POCK_ASSIGN_OR_RETURN(Ints dilations, at.get_ints("dilations", Ints(s, 1)));
  POCK_ASSIGN_OR_RETURN(Ints pads, at.get_ints("pads", Ints(2 * s, 0)));
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, at.get_string("auto_pad", "NOTSET"));
  if (kernel.size() != s || strides.size() != s || dilations.size() != s || pads.size() != 2 * s) {
    return node.error("window attributes must have " + std::to_string(s) + " values per axis for input " + shape_str(x));
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return node.unsupported("auto_pad " + auto_pad + " on pooling over " + std::to_string(s) + " spatial axes");
  }
  if (auto_pad == "VALID") pads.assign(2 * s, 0);
  if (node.output_used(1)) return node.unsupported("output 1 (argmax indices) is not supported");
  std::vector<size_t> window, unit;
  for (size_t d = 0; d < s; ++d) {
    const bool is_unit = kernel[d] == 1 && strides[d] == 1 && pads[d] == 0 && pads[d + s] == 0;
    (is_unit ? unit : window).push_back(d);
  }
  if (window.size() == 3 && s == 3) return convert_pool_3d(node, op, kernel, strides, dilations, pads);
  if (window.size() > 2) {
    return node.unsupported("pooling with a window on " + std::to_string(window.size()) + " spatial axes (kernel " +
                            shape_str(kernel) + "); pock pools over at most 3");
  }
  while (window.size() < 2) {  // the last unit axes serve as the pooled ones
    window.push_back(unit.back());
    unit.pop_back();
  }
  std::sort(window.begin(), window.end());
  for (size_t d : window) {
    if (dilations[d] != 1) return node.unsupported("dilated pooling is not supported");
  }
  Ints perm{0, 1};
  Ints merged{x[0], x[1], x[2 + window[0]], x[2 + window[1]]};
  for (size_t d : unit) {
    perm.push_back(static_cast<int64_t>(2 + d));
    merged[1] *= x[2 + d];
  }
  for (size_t d : window) perm.push_back(static_cast<int64_t>(2 + d));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  POCK_ASSIGN_OR_RETURN(TensorId t, node.input(0));
  if (!identity) {
    POCK_ASSIGN_OR_RETURN(auto moved, node.emit("Transpose", {t}, Attrs{{"perm", perm}}, "unit_axes_first"));
    t = moved[0];
  }
  POCK_ASSIGN_OR_RETURN(auto x4, node.emit("Reshape", {t}, Attrs{{"shape", merged}}, "x_2d"));
  const size_t a = window[0], b = window[1];
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, at.get_int("ceil_mode", 0));
  Attrs attrs{{"kernel", Ints{kernel[a], kernel[b]}},
              {"strides", Ints{strides[a], strides[b]}},
              {"pads", Ints{pads[a], pads[b], pads[a + s], pads[b + s]}},
              {"ceil_mode", ceil_mode}};
  if (std::string(op) == "AvgPool2d") {
    POCK_ASSIGN_OR_RETURN(int64_t include, at.get_int("count_include_pad", 0));
    attrs.set("count_include_pad", include);
  }
  POCK_ASSIGN_OR_RETURN(auto y4, node.emit(op, {x4[0]}, attrs, "pool2d"));
  const Shape& pooled = node.ctx().graph.tensor(y4[0]).shape;
  Ints unmerged{x[0], x[1]};
  for (size_t d : unit) unmerged.push_back(x[2 + d]);
  unmerged.push_back(pooled[2]);
  unmerged.push_back(pooled[3]);
  if (identity) return node.emit_final("Reshape", {y4[0]}, Attrs{{"shape", unmerged}});
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("Reshape", {y4[0]}, Attrs{{"shape", unmerged}}, "unit_axes_back"));
  Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return node.emit_final("Transpose", {y[0]}, Attrs{{"perm", inverse}});
}

}  // namespace pock::onnx_import
