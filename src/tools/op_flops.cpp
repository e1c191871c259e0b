#include "tools/op_flops.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace pock::tools {
namespace {

const Shape& shape_of(const ProgramSpec& spec, int32_t id) {
  static const Shape none;
  return id < 0 || static_cast<size_t>(id) >= spec.tensors.size() ? none : spec.tensors[static_cast<size_t>(id)].shape;
}

const Shape& in(const ProgramSpec& spec, const OpSpec& op, size_t i) {
  static const Shape none;
  return i < op.inputs.size() ? shape_of(spec, op.inputs[i]) : none;
}

const Shape& out(const ProgramSpec& spec, const OpSpec& op, size_t i) {
  static const Shape none;
  return i < op.outputs.size() ? shape_of(spec, op.outputs[i]) : none;
}

int64_t elements(const Shape& s) { return s.empty() ? 1 : numel(s); }

// The largest tensor an op reads or writes: what an elementwise op or a reduction walks over.
int64_t largest(const ProgramSpec& spec, const OpSpec& op) {
  int64_t n = 0;
  for (int32_t id : op.inputs) if (id >= 0) n = std::max(n, elements(shape_of(spec, id)));
  for (int32_t id : op.outputs) n = std::max(n, elements(shape_of(spec, id)));
  return n;
}

// Product of a 4-D weight's per-output-channel extent: C/groups * kh * kw.
int64_t conv_window_size(const Shape& w) { return w.size() == 4 ? w[1] * w[2] * w[3] : 0; }

int64_t pool_window_size(const OpSpec& op) {
  static const std::vector<int64_t> absent;  // get_ints returns its fallback by reference
  const std::vector<int64_t>& k = op.attrs.get_ints("kernel", absent);
  return k.size() == 2 ? k[0] * k[1] : 1;
}

// Pure data movement: reads and writes, no arithmetic.
bool moves_data_only(std::string_view op) {
  static const std::unordered_set<std::string_view> ops = {
      "Reshape", "Flatten", "Transpose", "Concat", "Slice",   "Split", "Squeeze", "Unsqueeze",
      "Expand",  "Pad",     "Identity",  "Cast",   "Gather",  "Dropout", "SliceGrad", "GatherQ"};
  return ops.count(op) > 0;
}

// Ops with a fixed number of FLOPs per element of their largest tensor. Norms: mean, variance,
// normalize, scale and shift; softmax: max, subtract, exp, sum, divide; optimizers: per updated
// element (Adam's moments, bias correction and step; SGD's decay, momentum and step).
int64_t per_element_cost(std::string_view op) {
  static const std::unordered_map<std::string_view, int64_t> costs = {
      {"BatchNorm", 2},          {"BatchNormTrain", 8},      {"LayerNorm", 8},
      {"RMSNorm", 5},            {"Softmax", 5},             {"LogSoftmax", 5},
      {"BatchNormTrainGrad", 10}, {"BatchNormParamGrad", 5}, {"LayerNormGrad", 10},
      {"RMSNormGrad", 8},        {"SoftmaxGrad", 3},         {"LogSoftmaxGrad", 3},
      {"SoftmaxCrossEntropy", 6}, {"SoftmaxCrossEntropyGrad", 4},
      {"SgdUpdate", 6},          {"AdamUpdate", 12}};
  auto it = costs.find(op);
  return it == costs.end() ? 1 : it->second;
}

}  // namespace

int64_t op_flops(const ProgramSpec& spec, const OpSpec& op) {
  const std::string& k = op.op;
  if (k == "Conv2d") return 2 * elements(out(spec, op, 0)) * conv_window_size(in(spec, op, 1));
  if (k == "Conv2dGradInput" || k == "ConvTranspose2d") {  // the same transposed convolution
    return 2 * elements(in(spec, op, 0)) * conv_window_size(in(spec, op, 1));
  }
  if (k == "Conv2dGradWeight") {
    const Shape& dy = in(spec, op, 1);  // [N, O, OH, OW]; dw [channels, C/g, kh, kw]
    return dy.size() == 4 ? 2 * elements(out(spec, op, 0)) * dy[0] * dy[2] * dy[3] : 0;
  }
  if (k == "Linear" || k == "LinearQ") {
    const Shape& x = in(spec, op, 0);
    return x.empty() ? 0 : 2 * elements(out(spec, op, 0)) * x.back();
  }
  if (k == "LinearQCrossEntropy") {  // the head's product, and again for dx when the op makes it
    const Shape& x = in(spec, op, 0);
    const Shape& w = in(spec, op, 1);
    if (x.empty() || w.empty()) return 0;
    return 2 * elements(x) * w[0] * (op.attrs.get_int("with_gradient", 1) != 0 ? 2 : 1);
  }
  if (k == "MatMul") {
    const Shape& a = in(spec, op, 0);
    if (a.size() < 2) return 0;
    const int64_t inner = op.attrs.get_int("transpose_a", 0) ? a[a.size() - 2] : a.back();
    return 2 * elements(out(spec, op, 0)) * inner;
  }
  if (k == "LinearInputGrad" || k == "LinearQInputGrad") {
    const Shape& w = in(spec, op, 1);  // [N, K], or LinearQ's blocks [N, row_bytes]
    return w.empty() ? 0 : 2 * elements(out(spec, op, 0)) * w[0];
  }
  if (k == "LinearWeightGrad") {
    const Shape& dy = in(spec, op, 0);  // [..., N]: every leading row contributes one outer product
    return dy.empty() || dy.back() == 0 ? 0 : 2 * elements(out(spec, op, 0)) * (elements(dy) / dy.back());
  }
  if (k == "MaxPool2d" || k == "AvgPool2d") return elements(out(spec, op, 0)) * pool_window_size(op);
  if (k == "MaxPool2dGrad" || k == "AvgPool2dGrad") return elements(in(spec, op, 0)) * pool_window_size(op);
  if (k == "SgdUpdate" || k == "AdamUpdate") return per_element_cost(k) * elements(in(spec, op, 1));  // the gradient
  if (moves_data_only(k)) return 0;
  return per_element_cost(k) * largest(spec, op);
}

}  // namespace pock::tools
