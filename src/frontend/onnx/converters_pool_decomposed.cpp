#include "frontend/onnx/converters_pool_decomposed.hpp"

#include <algorithm>
#include <cstring>
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

namespace {

// The lowest value of x's dtype (-inf; an 8-bit integer's minimum): as padding it never wins a
// maximum, as ONNX leaves padding out of the window.
double lowest_of(DType dtype) {
  if (dtype == DType::kU8) return 0.0;
  if (dtype == DType::kI8) return -128.0;
  return -std::numeric_limits<double>::infinity();
}

// The output extents of a dilated 2-D window over x [N, C, H, W]: with ceil_mode the last window
// is kept when it starts inside the input or its leading padding (the rule of the pooling schema).
Result<Ints> dilated_output(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations, const Ints& pads,
                            bool ceil_mode) {
  const Shape& x = node.value(0).shape;
  Ints out(2);
  for (int a = 0; a < 2; ++a) {
    const int64_t extent = (kernel[a] - 1) * dilations[a] + 1;
    const int64_t padded = x[2 + a] + pads[a] + pads[a + 2];
    if (padded < extent) return node.error("the dilated window " + shape_str(kernel) + " is larger than the padded input");
    out[a] = (padded - extent + (ceil_mode ? strides[a] - 1 : 0)) / strides[a] + 1;
    if (ceil_mode && (out[a] - 1) * strides[a] >= x[2 + a] + pads[a]) --out[a];
  }
  return out;
}

// One strided slice of the padded input (padding `pad_value`) per window tap, in row-major tap order, each
// [N, C, out_h, out_w]: tap (i, j) holds x[oh * sh - pad_t + i * dh, ow * sw - pad_l + j * dw].
Result<std::vector<TensorId>> window_taps(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                          Ints pads, const Ints& out, double pad_value) {
  const Shape& x = node.value(0).shape;
  for (int a = 0; a < 2; ++a) {  // a last window past the end (ceil_mode) reads padding too
    const int64_t needed = (out[a] - 1) * strides[a] + (kernel[a] - 1) * dilations[a] + 1;
    pads[a + 2] = std::max(pads[a + 2], needed - x[2 + a] - pads[a]);
  }
  POCK_ASSIGN_OR_RETURN(TensorId t, node.input(0));
  if (pads != Ints{0, 0, 0, 0}) {
    const Attrs pad{{"pads", Ints{0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}}, {"value", pad_value}};
    POCK_ASSIGN_OR_RETURN(auto padded, node.emit("Pad", {t}, pad, "pad"));
    t = padded[0];
  }
  std::vector<TensorId> taps;
  for (int64_t i = 0; i < kernel[0]; ++i) {
    for (int64_t j = 0; j < kernel[1]; ++j) {
      const Ints starts{i * dilations[0], j * dilations[1]};
      const Attrs slice{{"starts", starts},
                        {"ends", Ints{starts[0] + (out[0] - 1) * strides[0] + 1, starts[1] + (out[1] - 1) * strides[1] + 1}},
                        {"axes", Ints{2, 3}},
                        {"steps", strides}};
      POCK_ASSIGN_OR_RETURN(auto taken, node.emit("Slice", {t}, slice, "tap_" + std::to_string(i) + "_" + std::to_string(j)));
      taps.push_back(taken[0]);
    }
  }
  return taps;
}

}  // namespace

Status convert_max_pool_dilated(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  POCK_ASSIGN_OR_RETURN(Ints out, dilated_output(node, kernel, strides, dilations, pads, ceil_mode != 0));
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps,
                        window_taps(node, kernel, strides, dilations, pads, out, lowest_of(node.value(0).dtype)));
  TensorId best = taps[0];
  for (size_t k = 1; k < taps.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(auto larger, node.emit("Maximum", {best, taps[k]}, {}, "max_" + std::to_string(k)));
    best = larger[0];
  }
  return node.bind_output(0, best);
}

namespace {

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

Status convert_avg_pool_dilated(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  POCK_ASSIGN_OR_RETURN(int64_t count_include_pad, node.attrs().get_int("count_include_pad", 0));
  if (node.value(0).dtype != DType::kF32) {
    return node.unsupported("dilated AveragePool on " + std::string(dtype_name(node.value(0).dtype)) + " (float32 only)");
  }
  const Shape& x = node.value(0).shape;
  POCK_ASSIGN_OR_RETURN(Ints out, dilated_output(node, kernel, strides, dilations, pads, ceil_mode != 0));
  POCK_ASSIGN_OR_RETURN(Ints floor_out, dilated_output(node, kernel, strides, dilations, pads, false));
  if (count_include_pad != 0 && out != floor_out) {
    // Whether the taps past the end padding count is where ONNX's reference and PyTorch differ.
    return node.unsupported("dilated AveragePool with count_include_pad 1 and a ceil_mode window past the padding");
  }
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps, window_taps(node, kernel, strides, dilations, pads, out, 0.0));
  TensorId sum = taps[0];
  for (size_t k = 1; k < taps.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(auto added, node.emit("Add", {sum, taps[k]}, {}, "sum_" + std::to_string(k)));
    sum = added[0];
  }
  // The divisor of each output position: the window's taps inside the input (or inside the
  // padded input with count_include_pad), the same for every image and channel.
  std::vector<float> divisor(static_cast<size_t>(out[0] * out[1]));
  for (int64_t oh = 0; oh < out[0]; ++oh) {
    for (int64_t ow = 0; ow < out[1]; ++ow) {
      const int64_t pt = count_include_pad ? pads[0] : 0, pb = count_include_pad ? pads[2] : 0;
      const int64_t pl = count_include_pad ? pads[1] : 0, pr = count_include_pad ? pads[3] : 0;
      const int64_t rows = taps_inside(oh, kernel[0], strides[0], dilations[0], pads[0], -pt, x[2] + pb);
      const int64_t cols = taps_inside(ow, kernel[1], strides[1], dilations[1], pads[1], -pl, x[3] + pr);
      divisor[static_cast<size_t>(oh * out[1] + ow)] = static_cast<float>(rows * cols);
    }
  }
  std::vector<uint8_t> bytes(divisor.size() * sizeof(float));
  std::memcpy(bytes.data(), divisor.data(), bytes.size());
  Graph& g = node.ctx().graph;
  const TensorId counts = g.add_constant(g.unique_name(node.proto().output(0) + "/window_counts"), DType::kF32,
                                         Shape{1, 1, out[0], out[1]}, std::move(bytes));
  POCK_ASSIGN_OR_RETURN(auto mean, node.emit("Div", {sum, counts}, {}, "mean"));
  return node.bind_output(0, mean[0]);
}

Status convert_max_pool_indices(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads, const Shape& y) {
  POCK_ASSIGN_OR_RETURN(int64_t storage_order, node.attrs().get_int("storage_order", 0));
  const Shape& x = node.value(0).shape;
  // An 8-bit integer's padding value can tie a real element, and the first maximum would then
  // be a padded position.
  if (!is_float(node.value(0).dtype) && pads != Ints{0, 0, 0, 0}) {
    return node.unsupported("output 1 (argmax indices) of a padded " + std::string(dtype_name(node.value(0).dtype)) +
                            " MaxPool is not supported");
  }
  const Ints out{y[2], y[3]};
  const int64_t taps_per_window = kernel[0] * kernel[1];
  const int64_t entries = numel(y) * taps_per_window;
  constexpr int64_t kMaxEntries = int64_t{1} << 26;
  if (entries > kMaxEntries) {
    return node.unsupported("output 1 (argmax indices): its lookup table would hold " + std::to_string(entries) +
                            " entries, more than 2^26");
  }
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps,
                        window_taps(node, kernel, strides, dilations, pads, out, lowest_of(node.value(0).dtype)));
  // Which tap holds the maximum: the first of equal ones, as ONNX's reference picks.
  std::vector<TensorId> stacked;
  for (size_t k = 0; k < taps.size(); ++k) {
    POCK_ASSIGN_OR_RETURN(auto u, node.emit("Unsqueeze", {taps[k]}, Attrs{{"axes", Ints{4}}}, "tap_axis_" + std::to_string(k)));
    stacked.push_back(u[0]);
  }
  POCK_ASSIGN_OR_RETURN(auto all, node.emit("Concat", stacked, Attrs{{"axis", int64_t{4}}}, "taps"));
  POCK_ASSIGN_OR_RETURN(auto which, node.emit("ArgMax", {all[0]}, Attrs{{"axis", int64_t{4}}, {"keepdims", int64_t{1}}}, "argmax_tap"));
  // The input element each tap of each window reads, flattened over [N, C, H, W] row-major (or
  // with H and W swapped for storage_order 1), as a constant that the tap picks from.
  std::vector<int64_t> table(static_cast<size_t>(entries));
  size_t at = 0;
  for (int64_t nc = 0; nc < x[0] * x[1]; ++nc) {
    for (int64_t oh = 0; oh < out[0]; ++oh) {
      for (int64_t ow = 0; ow < out[1]; ++ow) {
        for (int64_t i = 0; i < kernel[0]; ++i) {
          for (int64_t j = 0; j < kernel[1]; ++j) {
            const int64_t h = oh * strides[0] - pads[0] + i * dilations[0];
            const int64_t w = ow * strides[1] - pads[1] + j * dilations[1];
            table[at++] = nc * x[2] * x[3] + (storage_order == 0 ? h * x[3] + w : w * x[2] + h);
          }
        }
      }
    }
  }
  std::vector<uint8_t> bytes(table.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), table.data(), bytes.size());
  const TensorId lookup = node.ctx().graph.add_constant(node.ctx().graph.unique_name(node.proto().output(0) + "/argmax_table"),
                                                        DType::kI64, Shape{y[0], y[1], y[2], y[3], taps_per_window}, bytes);
  POCK_ASSIGN_OR_RETURN(auto picked, node.emit("GatherElements", {lookup, which[0]}, Attrs{{"axis", int64_t{4}}}, "argmax_index"));
  POCK_ASSIGN_OR_RETURN(auto indices, node.emit("Squeeze", {picked[0]}, Attrs{{"axes", Ints{4}}}, "indices"));
  return node.bind_output(1, indices[0]);
}

}  // namespace pock::onnx_import
