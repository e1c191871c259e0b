#include "frontend/onnx/converters_pool_decomposed.hpp"

#include <limits>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Status convert_pool_3d(NodeView& node, const char* op, const Ints& kernel, const Ints& strides, const Ints& pads) {
  const Shape& x = node.value(0).shape;
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  Attrs hw{{"kernel", Ints{kernel[1], kernel[2]}},
           {"strides", Ints{strides[1], strides[2]}},
           {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
           {"ceil_mode", ceil_mode}};
  Attrs d{{"kernel", Ints{kernel[0], 1}},
          {"strides", Ints{strides[0], 1}},
          {"pads", Ints{pads[0], 0, pads[3], 0}},
          {"ceil_mode", ceil_mode}};
  if (std::string(op) == "AvgPool2d") {
    POCK_ASSIGN_OR_RETURN(int64_t include, node.attrs().get_int("count_include_pad", 0));
    hw.set("count_include_pad", include);
    d.set("count_include_pad", include);
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  // Depth joins the channels for the pool over H and W; the pooled planes are then contiguous,
  // so depth becomes the height of a pool over [D, H' W'] with a unit window along the width.
  POCK_ASSIGN_OR_RETURN(auto planes, node.emit("Reshape", {xt}, Attrs{{"shape", Ints{x[0], x[1] * x[2], x[3], x[4]}}}, "planes"));
  POCK_ASSIGN_OR_RETURN(auto pooled_hw, node.emit(op, {planes[0]}, hw, "pool_hw"));
  const Shape& p = node.ctx().graph.tensor(pooled_hw[0]).shape;
  const int64_t ho = p[2], wo = p[3];
  POCK_ASSIGN_OR_RETURN(auto columns, node.emit("Reshape", {pooled_hw[0]}, Attrs{{"shape", Ints{x[0], x[1], x[2], ho * wo}}}, "depth_rows"));
  POCK_ASSIGN_OR_RETURN(auto pooled, node.emit(op, {columns[0]}, d, "pool_d"));
  const int64_t dout = node.ctx().graph.tensor(pooled[0]).shape[2];
  return node.emit_final("Reshape", {pooled[0]}, Attrs{{"shape", Ints{x[0], x[1], dout, ho, wo}}});
}

Status convert_max_pool_dilated(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  if (ceil_mode != 0) return node.unsupported("dilated pooling with ceil_mode 1 is not supported");
  const Shape& x = node.value(0).shape;
  Ints out(2);
  for (int a = 0; a < 2; ++a) {
    const int64_t extent = (kernel[a] - 1) * dilations[a] + 1;
    const int64_t padded = x[2 + a] + pads[a] + pads[a + 2];
    if (padded < extent) return node.error("the dilated window " + shape_str(kernel) + " is larger than the padded input");
    out[a] = (padded - extent) / strides[a] + 1;
  }
  POCK_ASSIGN_OR_RETURN(TensorId t, node.input(0));
  if (pads != Ints{0, 0, 0, 0}) {
    // -inf never wins a maximum, as ONNX leaves padding out of the window.
    const Attrs pad{{"pads", Ints{0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}},
                    {"value", -std::numeric_limits<double>::infinity()}};
    POCK_ASSIGN_OR_RETURN(auto padded, node.emit("Pad", {t}, pad, "pad"));
    t = padded[0];
  }
  TensorId best = kNoTensor;
  for (int64_t i = 0; i < kernel[0]; ++i) {
    for (int64_t j = 0; j < kernel[1]; ++j) {
      const Ints starts{i * dilations[0], j * dilations[1]};
      const Attrs slice{{"starts", starts},
                        {"ends", Ints{starts[0] + (out[0] - 1) * strides[0] + 1, starts[1] + (out[1] - 1) * strides[1] + 1}},
                        {"axes", Ints{2, 3}},
                        {"steps", strides}};
      const std::string tap = std::to_string(i) + "_" + std::to_string(j);
      POCK_ASSIGN_OR_RETURN(auto taken, node.emit("Slice", {t}, slice, "tap_" + tap));
      if (best == kNoTensor) {
        best = taken[0];
        continue;
      }
      POCK_ASSIGN_OR_RETURN(auto larger, node.emit("Maximum", {best, taken[0]}, {}, "max_" + tap));
      best = larger[0];
    }
  }
  return node.bind_output(0, best);
}

}  // namespace pock::onnx_import
