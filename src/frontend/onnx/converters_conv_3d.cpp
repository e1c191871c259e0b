#include "frontend/onnx/converters_conv_3d.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "frontend/onnx/converters_conv_transpose.hpp"  // sized_ints

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// Pads (all begins, then all ends) after auto_pad: SAME_* pad to out = ceil(in / stride), the odd
// one at the end for SAME_UPPER, at the start for SAME_LOWER.
Result<Ints> conv_pads(NodeView& node, const Shape& x, const Ints& kernel, const Ints& strides, const Ints& dilations) {
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, node.attrs().get_string("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET") return sized_ints(node, "pads", Ints(6, 0));
  if (auto_pad == "VALID") return Ints(6, 0);
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return node.error("unknown auto_pad '" + auto_pad + "'");
  Ints pads(6, 0);
  for (size_t d = 0; d < 3; ++d) {
    const int64_t in = x[2 + d], out = (in + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>((out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in, 0);
    const int64_t small = total / 2, large = total - small;
    pads[d] = auto_pad == "SAME_UPPER" ? small : large;
    pads[d + 3] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

}  // namespace

Status convert_conv_3d(NodeView& node) {
  const Shape& x = node.value(0).shape;
  const Shape& w = node.value(1).shape;
  if (w.size() != 5) return node.input_error(1, "(weight) must be [M, C/group, kd, kh, kw], got " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(Ints strides, sized_ints(node, "strides", {1, 1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, sized_ints(node, "dilations", {1, 1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints kernel, sized_ints(node, "kernel_shape", {w[2], w[3], w[4]}));
  if (kernel != Ints{w[2], w[3], w[4]}) return node.error("kernel_shape " + shape_str(kernel) + " differs from the weight " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(Ints pads, conv_pads(node, x, kernel, strides, dilations));
  POCK_ASSIGN_OR_RETURN(int64_t group, node.attrs().get_int("group", 1));
  const int64_t n = x[0], c = x[1], sd = strides[0], dd = dilations[0];
  const int64_t padded_depth = x[2] + pads[0] + pads[3], extent = (kernel[0] - 1) * dd + 1;
  if (padded_depth < extent) return node.error("the kernel's depth extent " + std::to_string(extent) + " exceeds the padded input depth " + std::to_string(padded_depth));
  const int64_t depth_out = (padded_depth - extent) / sd + 1;
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId wt, node.input(1));
  if (pads[0] != 0 || pads[3] != 0) {
    POCK_ASSIGN_OR_RETURN(auto padded, node.emit("Pad", {xt}, Attrs{{"pads", Ints{0, 0, pads[0], 0, 0, 0, 0, pads[3], 0, 0}}}, "depth_pads"));
    xt = padded[0];
  }
  const Attrs plane_window{{"strides", Ints{strides[1], strides[2]}},
                           {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                           {"dilations", Ints{dilations[1], dilations[2]}},
                           {"groups", group}};
  TensorId sum = kNoTensor;
  Shape plane_out;
  for (int64_t i = 0; i < kernel[0]; ++i) {
    const std::string tap = "depth_tap_" + std::to_string(i);
    // The planes tap i reads for output depths 0, 1, ...: i * dilation, then every stride-th.
    const Attrs planes_of_tap{{"starts", Ints{i * dd}}, {"ends", Ints{i * dd + (depth_out - 1) * sd + 1}},
                              {"axes", Ints{2}}, {"steps", Ints{sd}}};
    POCK_ASSIGN_OR_RETURN(auto read, node.emit("Slice", {xt}, planes_of_tap, tap + "_planes"));
    POCK_ASSIGN_OR_RETURN(auto depth_first, node.emit("Transpose", {read[0]}, Attrs{{"perm", Ints{0, 2, 1, 3, 4}}}, tap + "_depth_first"));
    POCK_ASSIGN_OR_RETURN(auto images, node.emit("Reshape", {depth_first[0]}, Attrs{{"shape", Ints{n * depth_out, c, x[3], x[4]}}}, tap + "_images"));
    POCK_ASSIGN_OR_RETURN(auto wi, node.emit("Slice", {wt}, Attrs{{"starts", Ints{i}}, {"ends", Ints{i + 1}}, {"axes", Ints{2}}}, tap + "_w"));
    POCK_ASSIGN_OR_RETURN(auto wi4, node.emit("Reshape", {wi[0]}, Attrs{{"shape", Ints{w[0], w[1], w[3], w[4]}}}, tap + "_w2d"));
    std::vector<TensorId> in{images[0], wi4[0]};
    if (i == 0 && node.has_input(2)) {  // the bias, added once
      POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
      in.push_back(b);
    }
    POCK_ASSIGN_OR_RETURN(auto z, node.emit("Conv2d", in, plane_window, tap));
    plane_out = node.ctx().graph.tensor(z[0]).shape;  // [N Do, M, Ho, Wo]
    if (sum == kNoTensor) {
      sum = z[0];
      continue;
    }
    POCK_ASSIGN_OR_RETURN(auto added, node.emit("Add", {sum, z[0]}, {}, tap + "_sum"));
    sum = added[0];
  }
  POCK_ASSIGN_OR_RETURN(auto volume, node.emit("Reshape", {sum}, Attrs{{"shape", Ints{n, depth_out, plane_out[1], plane_out[2], plane_out[3]}}}, "volume"));
  return node.emit_final("Transpose", {volume[0]}, Attrs{{"perm", Ints{0, 2, 1, 3, 4}}});
}

}  // namespace pock::onnx_import
