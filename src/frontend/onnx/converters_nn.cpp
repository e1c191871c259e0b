// ONNX layers -> pock ops: Conv, BatchNormalization, pooling, Softmax, LayerNormalization and
// the reductions with ArgMax / ArgMin (docs/ops.md). Layout stays NCHW; 1-D convolutions run as 2-D with H = 1,
// 3-D ones as 2-D per depth tap (converters_conv_3d.cpp).
#include <algorithm>
#include <cmath>

#include "frontend/onnx/conv_window.hpp"
#include "frontend/onnx/converters_batch_norm_training.hpp"
#include "frontend/onnx/converters_conv_3d.hpp"
#include "frontend/onnx/converters_pool_decomposed.hpp"
#include "frontend/onnx/converters_pool_nd.hpp"
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// Conv1d [N, C, L] is imported as Conv2d on [N, C, 1, L] with the window attributes widened.
Status convert_conv1d(NodeView& node) {
  const NodeAttrs& at = node.attrs();
  POCK_ASSIGN_OR_RETURN(Ints strides, at.get_ints("strides", {1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, at.get_ints("dilations", {1}));
  POCK_ASSIGN_OR_RETURN(Ints pads, at.get_ints("pads", {0, 0}));
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, at.get_string("auto_pad", "NOTSET"));
  POCK_ASSIGN_OR_RETURN(int64_t group, at.get_int("group", 1));
  if (auto_pad != "NOTSET" || strides.size() != 1 || dilations.size() != 1 || pads.size() != 2) {
    return node.unsupported("1-D convolution with auto_pad or malformed window attributes");
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId w, node.input(1));
  const Attrs at_h{{"axes", Ints{2}}};
  POCK_ASSIGN_OR_RETURN(auto x4, node.emit("Unsqueeze", {x}, at_h, "x_2d"));
  POCK_ASSIGN_OR_RETURN(auto w4, node.emit("Unsqueeze", {w}, at_h, "w_2d"));
  std::vector<TensorId> in{x4[0], w4[0]};
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
    in.push_back(b);
  }
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("Conv2d", in,
                                          Attrs{{"strides", Ints{1, strides[0]}},
                                                {"pads", Ints{0, pads[0], 0, pads[1]}},
                                                {"dilations", Ints{1, dilations[0]}},
                                                {"groups", group}},
                                          "conv2d"));
  return node.emit_final("Squeeze", {y[0]}, at_h);
}

Status convert_conv(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (x.size() == 3) return convert_conv1d(node);
  if (x.size() == 5) return convert_conv_3d(node);
  if (x.size() != 4) return node.unsupported("only 1-D, 2-D and 3-D convolutions are supported, input is " + shape_str(x));
  const Shape& w = node.value(1).shape;
  if (w.size() != 4) return node.input_error(1, "(weight) must be [O, C/group, kh, kw], got " + shape_str(w));
  POCK_ASSIGN_OR_RETURN(Attrs window, conv2d_window_attrs(node, x, w));
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId wt, node.input(1));
  std::vector<TensorId> in{xt, wt};
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(TensorId b, node.input(2));
    in.push_back(b);
  }
  return node.emit_final("Conv2d", in, window);
}

// RMSNormalization (opset 23): pock's RMSNorm over x.shape[axis:], with a scale of that shape.
// stash_type 1 (float32 statistics) is what pock computes; another type would change the numbers.
Status convert_rms_normalization(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", -1));
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-5));
  POCK_ASSIGN_OR_RETURN(int64_t stash_type, node.attrs().get_int("stash_type", 1));
  if (stash_type != 1) return node.unsupported("stash_type " + std::to_string(stash_type) + " (pock computes in float32, 1)");
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId scale, node.input(1));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("RMSNorm", {x, scale}, Attrs{{"axis", axis}, {"eps", eps}}));
  return node.bind_output(0, y[0]);
}

// Running statistics become state tensors (updated by the train function, kept in checkpoints).
// ONNX momentum weighs the old running value (default 0.9); pock's is PyTorch's (new value).
Status convert_batch_norm(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-5));
  POCK_ASSIGN_OR_RETURN(double onnx_momentum, node.attrs().get_float("momentum", 0.9));
  POCK_ASSIGN_OR_RETURN(int64_t training_mode, node.attrs().get_int("training_mode", 0));
  const bool reads_running = node.output_used(1) || node.output_used(2);
  if (reads_running && training_mode != 0) return convert_batch_norm_training(node, eps, onnx_momentum);
  if (reads_running) {
    return node.unsupported(std::string("output ") + (node.output_used(1) ? "1" : "2") +
                            " (updated running statistics) is read by the model in inference mode (training_mode 0)");
  }
  // Attributes are float32: 1 - 0.9f is not 0.1 until rounded back to a short decimal.
  const double momentum = std::round((1.0 - onnx_momentum) * 1e7) / 1e7;
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId gamma, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId beta, node.input(2));
  POCK_ASSIGN_OR_RETURN(TensorId mean, node.input_as_state(3));
  POCK_ASSIGN_OR_RETURN(TensorId var, node.input_as_state(4));
  return node.emit_final("BatchNorm", {x, gamma, beta, mean, var}, Attrs{{"eps", eps},
                               {"momentum", momentum}});
}

// The attributes of the 2-D pooling op that a 1-D or N-D ONNX pooling runs as.
Result<Attrs> pool2d_attrs(const NodeAttrs& at, const char* op, Ints kernel, Ints strides, Ints pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, at.get_int("ceil_mode", 0));
  Attrs attrs{{"kernel", std::move(kernel)}, {"strides", std::move(strides)}, {"pads", std::move(pads)},
              {"ceil_mode", ceil_mode}};
  if (std::string(op) == "AvgPool2d") {
    POCK_ASSIGN_OR_RETURN(int64_t include, at.get_int("count_include_pad", 0));
    attrs.set("count_include_pad", include);
  }
  return attrs;
}

// MaxPool / AveragePool over [N, C, L] run as 2-D pooling on [N, C, 1, L], as Conv 1-D does.
Status convert_pool1d(NodeView& node, const char* op) {
  const NodeAttrs& at = node.attrs();
  POCK_ASSIGN_OR_RETURN(Ints kernel, at.get_ints("kernel_shape", {}));
  POCK_ASSIGN_OR_RETURN(Ints strides, at.get_ints("strides", {1}));
  POCK_ASSIGN_OR_RETURN(Ints dilations, at.get_ints("dilations", {1}));
  POCK_ASSIGN_OR_RETURN(Ints pads, at.get_ints("pads", {0, 0}));
  POCK_ASSIGN_OR_RETURN(std::string auto_pad, at.get_string("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET" || kernel.size() != 1 || strides.size() != 1 || dilations.size() != 1 || pads.size() != 2) {
    return node.unsupported("1-D pooling with auto_pad or malformed window attributes");
  }
  if (dilations[0] != 1) return node.unsupported("dilated pooling is not supported");
  if (node.output_used(1)) return node.unsupported("output 1 (argmax indices) is not supported");
  POCK_ASSIGN_OR_RETURN(Attrs attrs,
                        pool2d_attrs(at, op, Ints{1, kernel[0]}, Ints{1, strides[0]}, Ints{0, pads[0], 0, pads[1]}));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  const Attrs at_h{{"axes", Ints{2}}};
  POCK_ASSIGN_OR_RETURN(auto x4, node.emit("Unsqueeze", {x}, at_h, "x_2d"));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit(op, {x4[0]}, attrs, "pool2d"));
  return node.emit_final("Squeeze", {y[0]}, at_h);
}

Status emit_pool2d(NodeView& node, const char* op, const Ints& kernel, const Ints& strides, const Ints& pads);

Status convert_pool(NodeView& node, const char* op) {
  const Shape& x = node.value(0).shape;
  if (x.size() == 3) return convert_pool1d(node, op);
  if (x.size() > 4) return convert_pool_unit_axes(node, op);
  if (x.size() != 4) return node.unsupported("only 1-D, 2-D and unit-window N-D pooling are supported, input is " + shape_str(x));
  POCK_ASSIGN_OR_RETURN(Ints kernel, pair_attr(node, "kernel_shape", {}));
  POCK_ASSIGN_OR_RETURN(Ints strides, pair_attr(node, "strides", {1, 1}));  // ONNX default: 1, not the kernel
  POCK_ASSIGN_OR_RETURN(Ints dilations, pair_attr(node, "dilations", {1, 1}));
  POCK_ASSIGN_OR_RETURN(Ints pads, window_pads(node, x, kernel, strides, dilations));
  if (node.output_used(1)) {  // MaxPool's argmax indices, beside y from the same window
    if (dilations != Ints{1, 1}) POCK_RETURN_IF_ERROR(convert_max_pool_dilated(node, kernel, strides, dilations, pads));
    else POCK_RETURN_IF_ERROR(emit_pool2d(node, op, kernel, strides, pads));
    const Shape y = node.ctx().graph.tensor(node.ctx().find(node.proto().output(0))->id).shape;
    return convert_max_pool_indices(node, kernel, strides, dilations, pads, y);
  }
  if (dilations != Ints{1, 1} && std::string(op) == "AvgPool2d") return convert_avg_pool_dilated(node, kernel, strides, dilations, pads);
  if (dilations != Ints{1, 1}) return convert_max_pool_dilated(node, kernel, strides, dilations, pads);
  return emit_pool2d(node, op, kernel, strides, pads);
}

// pock's 2-D pooling op for this node's window; binds output 0.
Status emit_pool2d(NodeView& node, const char* op, const Ints& kernel, const Ints& strides, const Ints& pads) {
  POCK_ASSIGN_OR_RETURN(int64_t ceil_mode, node.attrs().get_int("ceil_mode", 0));
  Attrs attrs{{"kernel", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", ceil_mode}};
  if (std::string(op) == "AvgPool2d") {
    POCK_ASSIGN_OR_RETURN(int64_t include, node.attrs().get_int("count_include_pad", 0));
    attrs.set("count_include_pad", include);
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  return node.emit_final(op, {xt}, attrs);
}
Status convert_max_pool(NodeView& n) { return convert_pool(n, "MaxPool2d"); }
Status convert_avg_pool(NodeView& n) { return convert_pool(n, "AvgPool2d"); }

Status convert_global_avg_pool(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (node.value(0).shape.size() == 4) return node.emit_final("GlobalAvgPool", {x});
  Ints axes;
  for (size_t d = 2; d < node.value(0).shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  return node.emit_final("ReduceMean", {x}, Attrs{{"axes", axes}, {"keepdims", int64_t{1}}});
}

Status convert_global_max_pool(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  Ints axes;
  for (size_t d = 2; d < node.value(0).shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  return node.emit_final("ReduceMax", {x}, Attrs{{"axes", axes}, {"keepdims", int64_t{1}}});
}

Status convert_softmax_like(NodeView& node, const char* op) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", -1));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final(op, {x}, Attrs{{"axis", axis}});
}
Status convert_softmax(NodeView& n) { return convert_softmax_like(n, "Softmax"); }
Status convert_log_softmax(NodeView& n) { return convert_softmax_like(n, "LogSoftmax"); }

// ONNX's Mean and InvStdDev (outputs 1, 2) keep x's rank, 1 from `axis` on; pock's LayerNorm
// statistics are x.shape[:axis], so the ones the model reads are reshaped.
Status bind_layer_norm_statistics(NodeView& node, const std::vector<TensorId>& outs, int64_t axis) {
  const Shape& x = node.value(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t a = axis < 0 ? axis + rank : axis;  // the LayerNorm node has checked the range
  Ints shape(x.begin(), x.begin() + a);
  shape.resize(x.size(), 1);
  for (int i = 1; i <= 2; ++i) {
    if (!node.output_used(i)) continue;
    if (outs.size() <= static_cast<size_t>(i)) return node.error("LayerNorm gave no statistic output " + std::to_string(i));
    POCK_ASSIGN_OR_RETURN(auto stat, node.emit("Reshape", {outs[static_cast<size_t>(i)]}, Attrs{{"shape", shape}},
                                               i == 1 ? "mean" : "inv_std_dev"));
    POCK_RETURN_IF_ERROR(node.bind_output(i, stat[0]));
  }
  return Status::ok();
}

Status convert_layer_norm(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", -1));
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-5));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  std::vector<TensorId> in{x};
  for (int i = 1; i <= 2; ++i) {
    if (!node.has_input(i)) {
      in.push_back(kNoTensor);
      continue;
    }
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(i));
    in.push_back(t);
  }
  while (in.back() == kNoTensor) in.pop_back();
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("LayerNorm", in, Attrs{{"axis", axis}, {"eps", eps}}));
  POCK_RETURN_IF_ERROR(bind_layer_norm_statistics(node, y, axis));
  return node.bind_output(0, y[0]);
}

// Reductions: axes are an attribute up to opset 17 (ReduceSum: an input since 13).
Status convert_reduce(NodeView& node, const char* op) {
  Ints axes;
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(axes, node.const_ints(1, "axes"));
  } else {
    POCK_ASSIGN_OR_RETURN(axes, node.attrs().get_ints("axes", {}));
  }
  POCK_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs().get_int("keepdims", 1));
  POCK_ASSIGN_OR_RETURN(int64_t noop, node.attrs().get_int("noop_with_empty_axes", 0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (axes.empty() && noop) return node.bind_output(0, x);
  return node.emit_final(op, {x}, Attrs{{"axes", axes}, {"keepdims", keepdims}});
}
Status convert_reduce_mean(NodeView& n) { return convert_reduce(n, "ReduceMean"); }
Status convert_reduce_sum(NodeView& n) { return convert_reduce(n, "ReduceSum"); }
Status convert_reduce_max(NodeView& n) { return convert_reduce(n, "ReduceMax"); }
Status convert_reduce_min(NodeView& n) { return convert_reduce(n, "ReduceMin"); }
Status convert_reduce_prod(NodeView& n) { return convert_reduce(n, "ReduceProd"); }
Status convert_reduce_sum_square(NodeView& n) { return convert_reduce(n, "ReduceSumSquare"); }
Status convert_reduce_l1(NodeView& n) { return convert_reduce(n, "ReduceL1"); }
Status convert_reduce_l2(NodeView& n) { return convert_reduce(n, "ReduceL2"); }
Status convert_reduce_log_sum(NodeView& n) { return convert_reduce(n, "ReduceLogSum"); }
Status convert_reduce_log_sum_exp(NodeView& n) { return convert_reduce(n, "ReduceLogSumExp"); }

// ArgMax / ArgMin: i64 indices, as ONNX has them; the attributes carry over unchanged.
Status convert_arg_extremum(NodeView& node, const char* op) {
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", 0));
  POCK_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs().get_int("keepdims", 1));
  POCK_ASSIGN_OR_RETURN(int64_t last, node.attrs().get_int("select_last_index", 0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final(op, {x}, Attrs{{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
}
Status convert_arg_max(NodeView& n) { return convert_arg_extremum(n, "ArgMax"); }
Status convert_arg_min(NodeView& n) { return convert_arg_extremum(n, "ArgMin"); }

}  // namespace

void register_nn_converters(std::unordered_map<std::string, Converter>& t) {
  t["Conv"] = convert_conv;
  t["BatchNormalization"] = convert_batch_norm;
  t["MaxPool"] = convert_max_pool;
  t["AveragePool"] = convert_avg_pool;
  t["GlobalAveragePool"] = convert_global_avg_pool;
  t["GlobalMaxPool"] = convert_global_max_pool;
  t["Softmax"] = convert_softmax;
  t["LogSoftmax"] = convert_log_softmax;
  t["LayerNormalization"] = convert_layer_norm;
  t["RMSNormalization"] = convert_rms_normalization;
  t["ReduceMean"] = convert_reduce_mean;
  t["ReduceSum"] = convert_reduce_sum;
  t["ReduceMax"] = convert_reduce_max;
  t["ReduceMin"] = convert_reduce_min;
  t["ReduceProd"] = convert_reduce_prod;
  t["ReduceSumSquare"] = convert_reduce_sum_square;
  t["ReduceL1"] = convert_reduce_l1;
  t["ReduceL2"] = convert_reduce_l2;
  t["ReduceLogSum"] = convert_reduce_log_sum;
  t["ReduceLogSumExp"] = convert_reduce_log_sum_exp;
  t["ArgMax"] = convert_arg_max;
  t["ArgMin"] = convert_arg_min;
}

}  // namespace pock::onnx_import
