#include "frontend/onnx/pool_dilated.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Result<Ints> dilated_output(NodeView& node, const DilatedPool& p) {
  Ints out(2);
  for (int a = 0; a < 2; ++a) {
    const int64_t extent = (p.kernel[a] - 1) * p.dilations[a] + 1;
    const int64_t padded = p.shape[2 + a] + p.pads[a] + p.pads[a + 2];
    if (padded < extent) return node.error("the dilated window " + shape_str(p.kernel) + " is larger than the padded input");
    out[a] = (padded - extent + (p.ceil_mode ? p.strides[a] - 1 : 0)) / p.strides[a] + 1;
    if (p.ceil_mode && (out[a] - 1) * p.strides[a] >= p.shape[2 + a] + p.pads[a]) --out[a];
  }
  return out;
}

Result<std::vector<TensorId>> window_taps(NodeView& node, const DilatedPool& p, const Ints& out, double pad_value) {
  Ints pads = p.pads;
  for (int a = 0; a < 2; ++a) {  // a last window past the end (ceil_mode) reads padding too
    const int64_t needed = (out[a] - 1) * p.strides[a] + (p.kernel[a] - 1) * p.dilations[a] + 1;
    pads[a + 2] = std::max(pads[a + 2], needed - p.shape[2 + a] - pads[a]);
  }
  TensorId t = p.x;
  if (pads != Ints{0, 0, 0, 0}) {
    const Attrs pad{{"pads", Ints{0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}}, {"value", pad_value}};
    POCK_ASSIGN_OR_RETURN(auto padded, node.emit("Pad", {t}, pad, p.tag + "pad"));
    t = padded[0];
  }
  std::vector<TensorId> taps;
  for (int64_t i = 0; i < p.kernel[0]; ++i) {
    for (int64_t j = 0; j < p.kernel[1]; ++j) {
      const Ints starts{i * p.dilations[0], j * p.dilations[1]};
      const Attrs slice{{"starts", starts},
                        {"ends", Ints{starts[0] + (out[0] - 1) * p.strides[0] + 1, starts[1] + (out[1] - 1) * p.strides[1] + 1}},
                        {"axes", Ints{2, 3}},
                        {"steps", p.strides}};
      POCK_ASSIGN_OR_RETURN(auto taken, node.emit("Slice", {t}, slice, p.tag + "tap_" + std::to_string(i) + "_" + std::to_string(j)));
      taps.push_back(taken[0]);
    }
  }
  return taps;
}

double lowest_of(DType dtype) {
  if (dtype == DType::kU8) return 0.0;
  if (dtype == DType::kI8) return -128.0;
  return -std::numeric_limits<double>::infinity();
}

namespace {

// Folds the taps left to right with the elementwise `op`.
Result<TensorId> fold_taps(NodeView& node, const DilatedPool& p, const std::vector<TensorId>& taps, const char* op) {
  TensorId acc = taps[0];
  for (size_t k = 1; k < taps.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(auto next, node.emit(op, {acc, taps[k]}, {}, p.tag + op + "_" + std::to_string(k)));
    acc = next[0];
  }
  return acc;
}

// How many taps of the window at output position o lie inside [lo, hi) along one axis.
int64_t taps_inside(int64_t o, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t lo, int64_t hi) {
  int64_t count = 0;
  for (int64_t i = 0; i < kernel; ++i) {
    const int64_t at = o * stride - pad_begin + i * dilation;
    count += at >= lo && at < hi ? 1 : 0;
  }
  return count;
}

}  // namespace

Result<TensorId> dilated_max(NodeView& node, const DilatedPool& p) {
  POCK_ASSIGN_OR_RETURN(Ints out, dilated_output(node, p));
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps, window_taps(node, p, out, lowest_of(p.dtype)));
  return fold_taps(node, p, taps, "Maximum");
}

Result<TensorId> dilated_mean(NodeView& node, const DilatedPool& p, bool count_include_pad) {
  if (p.dtype != DType::kF32) return node.unsupported("dilated AveragePool on " + std::string(dtype_name(p.dtype)) + " (float32 only)");
  POCK_ASSIGN_OR_RETURN(Ints out, dilated_output(node, p));
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps, window_taps(node, p, out, 0.0));
  POCK_ASSIGN_OR_RETURN(TensorId sum, fold_taps(node, p, taps, "Add"));
  // The divisor of each output position, the same for every image and channel: the taps inside
  // the input, or with count_include_pad inside the padded input.
  const Ints counted = count_include_pad ? p.pads : Ints{0, 0, 0, 0};
  std::vector<float> divisor(static_cast<size_t>(out[0] * out[1]));
  for (int64_t oh = 0; oh < out[0]; ++oh) {
    for (int64_t ow = 0; ow < out[1]; ++ow) {
      const int64_t rows = taps_inside(oh, p.kernel[0], p.strides[0], p.dilations[0], p.pads[0], -counted[0], p.shape[2] + counted[2]);
      const int64_t cols = taps_inside(ow, p.kernel[1], p.strides[1], p.dilations[1], p.pads[1], -counted[1], p.shape[3] + counted[3]);
      divisor[static_cast<size_t>(oh * out[1] + ow)] = static_cast<float>(rows * cols);
    }
  }
  std::vector<uint8_t> bytes(divisor.size() * sizeof(float));
  std::memcpy(bytes.data(), divisor.data(), bytes.size());
  Graph& g = node.ctx().graph;
  const TensorId counts = g.add_constant(g.unique_name(node.proto().output(0) + "/" + p.tag + "window_counts"), DType::kF32,
                                         Shape{1, 1, out[0], out[1]}, std::move(bytes));
  POCK_ASSIGN_OR_RETURN(auto mean, node.emit("Div", {sum, counts}, {}, p.tag + "mean"));
  return mean[0];
}

}  // namespace pock::onnx_import
