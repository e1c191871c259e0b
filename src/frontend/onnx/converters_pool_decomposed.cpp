#include "frontend/onnx/converters_pool_decomposed.hpp"

#include "frontend/onnx/pool_dilated.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

namespace {

// The node's input x [N, C, H, W] under a dilated 2-D window.
Result<DilatedPool> node_window(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations, const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  DilatedPool p;
  POCK_ASSIGN_OR_RETURN(p.x, node.input(0));
  p.shape = node.value(0).shape;
  p.dtype = node.value(0).dtype;
  p.kernel = kernel;
  p.strides = strides;
  p.dilations = dilations;
  p.pads = pads;
  p.ceil_mode = ceil_mode != 0;
  return p;
}

// One 2-D pass of a separable 3-D pooling over x (shape `shape`): pock's pooling op `op` when
// the window is not dilated, else the dilated decomposition.
Result<TensorId> pool_pass(NodeView& node, const char* op, TensorId x, const Shape& shape, const Ints& kernel,
                           const Ints& strides, const Ints& dilations, const Ints& pads, const std::string& tag) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  POCK_ASSIGN_OR_RETURN(int64_t include, node.attrs().get_int("count_include_pad", 0));
  const bool average = std::string(op) == "AvgPool2d";
  if (dilations == Ints{1, 1}) {
    Attrs attrs{{"kernel", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", ceil_mode}};
    if (average) attrs.set("count_include_pad", include);
    POCK_ASSIGN_OR_RETURN(auto pooled, node.emit(op, {x}, attrs, tag));
    return pooled[0];
  }
  const DilatedPool p{x, shape, node.value(0).dtype, kernel, strides, dilations, pads, ceil_mode != 0, tag + "/"};
  if (average) return dilated_mean(node, p, include != 0);
  return dilated_max(node, p);
}

}  // namespace

Status convert_pool_3d(NodeView& node, const char* op, const Ints& kernel, const Ints& strides, const Ints& dilations,
                       const Ints& pads) {
  const Shape& x = node.value(0).shape;
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  // Depth joins the channels for the pool over H and W; the pooled planes are then contiguous,
  // so depth becomes the height of a pool over [D, H' W'] with a unit window along the width.
  const Shape planes_shape{x[0], x[1] * x[2], x[3], x[4]};
  POCK_ASSIGN_OR_RETURN(auto planes, node.emit("Reshape", {xt}, Attrs{{"shape", planes_shape}}, "planes"));
  POCK_ASSIGN_OR_RETURN(TensorId pooled_hw, pool_pass(node, op, planes[0], planes_shape, {kernel[1], kernel[2]}, {strides[1], strides[2]},
                                                       {dilations[1], dilations[2]}, {pads[1], pads[2], pads[4], pads[5]}, "pool_hw"));
  const Shape& p = node.ctx().graph.tensor(pooled_hw).shape;
  const int64_t ho = p[2], wo = p[3];
  const Shape rows_shape{x[0], x[1], x[2], ho * wo};
  POCK_ASSIGN_OR_RETURN(auto columns, node.emit("Reshape", {pooled_hw}, Attrs{{"shape", rows_shape}}, "depth_rows"));
  POCK_ASSIGN_OR_RETURN(TensorId pooled, pool_pass(node, op, columns[0], rows_shape, {kernel[0], 1}, {strides[0], 1},
                                                    {dilations[0], 1}, {pads[0], 0, pads[3], 0}, "pool_d"));
  const int64_t dout = node.ctx().graph.tensor(pooled).shape[2];
  return node.emit_final("Reshape", {pooled}, Attrs{{"shape", Ints{x[0], x[1], dout, ho, wo}}});
}

Status convert_max_pool_dilated(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(DilatedPool p, node_window(node, kernel, strides, dilations, pads));
  POCK_ASSIGN_OR_RETURN(TensorId y, dilated_max(node, p));
  return node.bind_output(0, y);
}

Status convert_avg_pool_dilated(NodeView& node, const Ints& kernel, const Ints& strides, const Ints& dilations,
                                const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t count_include_pad, node.attrs().get_int("count_include_pad", 0));
  POCK_ASSIGN_OR_RETURN(DilatedPool p, node_window(node, kernel, strides, dilations, pads));
  POCK_ASSIGN_OR_RETURN(TensorId y, dilated_mean(node, p, count_include_pad != 0));
  return node.bind_output(0, y);
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
  POCK_ASSIGN_OR_RETURN(DilatedPool p, node_window(node, kernel, strides, dilations, pads));
  POCK_ASSIGN_OR_RETURN(std::vector<TensorId> taps, window_taps(node, p, out, lowest_of(p.dtype)));
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
