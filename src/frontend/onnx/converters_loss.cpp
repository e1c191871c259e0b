// ONNX losses -> pock ops: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (docs/onnx.md).
// ONNX puts the class axis second ([N, C, d1, ...]); labels are i64 [N, d1, ...].
#include <limits>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// reduction and ignore_index as pock's NllLoss takes them; ignore_index stays absent when the
// node has none (NllLoss then ignores no label).
Result<Attrs> loss_attrs(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string reduction, node.attrs().get_string("reduction", "mean"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return node.error("reduction must be none, sum or mean, got '" + reduction + "'");
  }
  Attrs attrs{{"reduction", reduction}};
  if (node.attrs().has("ignore_index")) {
    POCK_ASSIGN_OR_RETURN(int64_t ignore, node.attrs().get_int("ignore_index", 0));
    attrs.set("ignore_index", ignore);
  }
  return attrs;
}

// NllLoss(log_prob, labels[, weight]) bound to output 0.
Status emit_nll(NodeView& node, TensorId log_prob, const Attrs& attrs) {
  POCK_ASSIGN_OR_RETURN(TensorId labels, node.input(1));
  std::vector<TensorId> in{log_prob, labels};
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(TensorId weight, node.input(2));
    in.push_back(weight);
  }
  POCK_ASSIGN_OR_RETURN(auto loss, node.emit("NllLoss", in, attrs, "nll"));
  return node.bind_output(0, loss[0]);
}

Status convert_nll_loss(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Attrs attrs, loss_attrs(node));
  POCK_ASSIGN_OR_RETURN(TensorId log_prob, node.input(0));
  return emit_nll(node, log_prob, attrs);
}

// The form pock's SoftmaxCrossEntropy computes (mean over the labels not ignored, no weights,
// log_prob not read) takes its fused kernels, with the class axis moved last; everything else is
// LogSoftmax over axis 1 followed by NllLoss, LogSoftmax's output being ONNX's log_prob.
Status convert_softmax_cross_entropy(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Attrs attrs, loss_attrs(node));
  POCK_ASSIGN_OR_RETURN(TensorId scores, node.input(0));
  const size_t rank = node.value(0).shape.size();
  if (rank < 2) return node.input_error(0, "(scores) must be [N, C, d1, ...], got " + shape_str(node.value(0).shape));
  const bool fused = attrs.get_string("reduction", "mean") == "mean" && !node.has_input(2) && !node.output_used(1);
  if (!fused) {
    POCK_ASSIGN_OR_RETURN(auto log_prob, node.emit("LogSoftmax", {scores}, Attrs{{"axis", int64_t{1}}}, "log_prob"));
    POCK_RETURN_IF_ERROR(node.bind_output(1, log_prob[0]));
    return emit_nll(node, log_prob[0], attrs);
  }
  TensorId logits = scores;
  if (rank > 2) {
    Ints perm{0};
    for (size_t d = 2; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
    perm.push_back(1);
    POCK_ASSIGN_OR_RETURN(auto moved, node.emit("Transpose", {scores}, Attrs{{"perm", perm}}, "classes_last"));
    logits = moved[0];
  }
  POCK_ASSIGN_OR_RETURN(TensorId labels, node.input(1));
  // Without ignore_index no label is ignored; pock's default (-100, PyTorch's) must not apply.
  const int64_t ignore = attrs.get_int("ignore_index", std::numeric_limits<int64_t>::min());
  POCK_ASSIGN_OR_RETURN(auto loss, node.emit("SoftmaxCrossEntropy", {logits, labels}, Attrs{{"ignore_index", ignore}}, "loss"));
  return node.bind_output(0, loss[0]);
}

}  // namespace

void register_loss_converters(std::unordered_map<std::string, Converter>& t) {
  t["SoftmaxCrossEntropyLoss"] = convert_softmax_cross_entropy;
  t["NegativeLogLikelihoodLoss"] = convert_nll_loss;
}

}  // namespace pock::onnx_import
