#include "frontend/onnx/converters_conv_transpose.hpp"

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Result<TensorId> convert_conv_transpose_3d(NodeView& node, const ConvTransposeWindow& win, int64_t group) {
  const Shape& x = node.value(0).shape;
  const Shape& w = node.value(1).shape;
  const int64_t n = x[0], c = x[1], depth = x[2];
  const int64_t kd = win.kernel[0], sd = win.strides[0], dd = win.dilations[0];
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId wt, node.input(1));
  // Every depth plane of x as an image of the batch: [N, C, D, H, W] -> [N D, C, H, W].
  POCK_ASSIGN_OR_RETURN(auto planes_first, node.emit("Transpose", {xt}, Attrs{{"perm", Ints{0, 2, 1, 3, 4}}}, "depth_first"));
  POCK_ASSIGN_OR_RETURN(auto planes, node.emit("Reshape", {planes_first[0]}, Attrs{{"shape", Ints{n * depth, c, x[3], x[4]}}}, "planes"));
  const Attrs plane_window{{"strides", Ints{win.strides[1], win.strides[2]}},
                           {"pads", Ints{win.pads[1], win.pads[2], win.pads[4], win.pads[5]}},
                           {"dilations", Ints{win.dilations[1], win.dilations[2]}},
                           {"groups", group},
                           {"output_padding", Ints{win.output_padding[1], win.output_padding[2]}}};
  const int64_t spread = (depth - 1) * sd + 1;           // a tap's planes, stride apart
  const int64_t full = spread + (kd - 1) * dd;           // the whole output depth before pads
  TensorId sum = kNoTensor;
  Shape plane_out;
  for (int64_t i = 0; i < kd; ++i) {
    const std::string tap = "depth_tap_" + std::to_string(i);
    POCK_ASSIGN_OR_RETURN(auto wi, node.emit("Slice", {wt}, Attrs{{"starts", Ints{i}}, {"ends", Ints{i + 1}}, {"axes", Ints{2}}}, tap + "_w"));
    POCK_ASSIGN_OR_RETURN(auto wi4, node.emit("Reshape", {wi[0]}, Attrs{{"shape", Ints{w[0], w[1], w[3], w[4]}}}, tap + "_w2d"));
    POCK_ASSIGN_OR_RETURN(auto z, node.emit("ConvTranspose2d", {planes[0], wi4[0]}, plane_window, tap));
    plane_out = node.ctx().graph.tensor(z[0]).shape;  // [N D, M, Ho, Wo]
    const int64_t features = plane_out[1] * plane_out[2] * plane_out[3];
    POCK_ASSIGN_OR_RETURN(auto rows, node.emit("Reshape", {z[0]}, Attrs{{"shape", Ints{n, depth, features}}}, tap + "_rows"));
    TensorId placed = rows[0];
    if (sd > 1 && depth > 1) {  // stride - 1 zero planes after each plane, the last ones cut
      POCK_ASSIGN_OR_RETURN(auto gap, node.emit("Pad", {placed}, Attrs{{"pads", Ints{0, 0, 0, 0, 0, (sd - 1) * features}}}, tap + "_gap"));
      POCK_ASSIGN_OR_RETURN(auto spaced, node.emit("Reshape", {gap[0]}, Attrs{{"shape", Ints{n, depth * sd, features}}}, tap + "_spaced"));
      POCK_ASSIGN_OR_RETURN(auto cut, node.emit("Slice", {spaced[0]}, Attrs{{"starts", Ints{0}}, {"ends", Ints{spread}}, {"axes", Ints{1}}}, tap + "_spread"));
      placed = cut[0];
    }
    // The tap's planes start at depth i * dilation of the full output.
    POCK_ASSIGN_OR_RETURN(auto shifted, node.emit("Pad", {placed}, Attrs{{"pads", Ints{0, i * dd, 0, 0, full - spread - i * dd, 0}}}, tap + "_at"));
    if (sum == kNoTensor) {
      sum = shifted[0];
      continue;
    }
    POCK_ASSIGN_OR_RETURN(auto added, node.emit("Add", {sum, shifted[0]}, {}, tap + "_sum"));
    sum = added[0];
  }
  // Depth pads cut the full output (negative Pad); output_padding adds zero planes at the end.
  const int64_t begin = -win.pads[0], end = win.output_padding[0] - win.pads[3];
  const int64_t out_depth = full + begin + end;
  if (out_depth < 1) return node.error("the output depth would be " + std::to_string(out_depth));
  if (begin != 0 || end != 0) {
    POCK_ASSIGN_OR_RETURN(auto cropped, node.emit("Pad", {sum}, Attrs{{"pads", Ints{0, begin, 0, 0, end, 0}}}, "depth_pads"));
    sum = cropped[0];
  }
  POCK_ASSIGN_OR_RETURN(auto volume, node.emit("Reshape", {sum}, Attrs{{"shape", Ints{n, out_depth, plane_out[1], plane_out[2], plane_out[3]}}}, "volume"));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("Transpose", {volume[0]}, Attrs{{"perm", Ints{0, 2, 1, 3, 4}}}, "channels_first"));
  return y[0];
}

}  // namespace pock::onnx_import
