#include "compiler/passes/conv_batchnorm_fold.hpp"

#include <cmath>
#include <cstring>

namespace pock {
namespace {

uint64_t bits_of(double v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

double eps_of(const Node& bn) { return bn.attrs.get_float("eps", 1e-5); }

TensorId conv_bias(const Node& conv) { return conv.inputs.size() > 2 ? conv.inputs[2] : kNoTensor; }

}  // namespace

int conv_before_frozen_batchnorm(const Graph& g, const FunctionDef& fn, const FunctionUses& uses,
                                 const std::unordered_set<TensorId>& mutated, const std::vector<bool>& removed,
                                 size_t k) {
  const Node& bn = fn.nodes[k];
  if (bn.op != "BatchNorm" || bn.inputs.size() != 5 || bn.outputs.size() != 1) return -1;
  const TensorId x = bn.inputs[0];
  const int p = uses.producer(x);
  if (p < 0 || removed[static_cast<size_t>(p)]) return -1;
  const Node& conv = fn.nodes[static_cast<size_t>(p)];
  if (conv.op != "Conv2d" || has_fused_activation(conv) || conv.outputs.size() != 1) return -1;
  // The pre-normalization tensor disappears: nothing else may need it (a backward pass, say).
  if (uses.is_signature(x) || uses.readers(x).size() != 1) return -1;
  if (g.tensor(x).dtype != DType::kF32) return -1;
  for (size_t i : {kBnGamma, kBnMean, kBnVar}) {
    if (!is_fixed_f32(g, mutated, bn.inputs[i])) return -1;
  }
  if (!is_fixed_f32(g, mutated, conv.inputs[1])) return -1;
  const TensorId bias = conv_bias(conv);
  if (bias != kNoTensor && !is_fixed_f32(g, mutated, bias)) return -1;
  return p;
}

FoldedConv ConvBatchNormFolds::fold(Graph& g, const Node& conv, const Node& bn, bool with_beta) {
  const TensorId bias_id = conv_bias(conv);
  const Key key{conv.inputs[1],    bias_id,           bn.inputs[kBnGamma], with_beta ? bn.inputs[kBnBeta] : kNoTensor,
                bn.inputs[kBnMean], bn.inputs[kBnVar], bits_of(eps_of(bn)), with_beta};
  auto found = done_.find(key);
  if (found != done_.end()) return found->second;

  const TensorDesc& w = g.tensor(conv.inputs[1]);
  const std::vector<double> weight = f32_values(w);
  const std::vector<double> gamma = f32_values(g.tensor(bn.inputs[kBnGamma]));
  const std::vector<double> mean = f32_values(g.tensor(bn.inputs[kBnMean]));
  const std::vector<double> var = f32_values(g.tensor(bn.inputs[kBnVar]));
  const size_t channels = gamma.size();
  const std::vector<double> beta =
      with_beta ? f32_values(g.tensor(bn.inputs[kBnBeta])) : std::vector<double>(channels, 0.0);
  const std::vector<double> bias =
      bias_id == kNoTensor ? std::vector<double>(channels, 0.0) : f32_values(g.tensor(bias_id));
  const double eps = eps_of(bn);
  const size_t per_channel = channels ? weight.size() / channels : 0;
  std::vector<double> new_weight(weight.size()), new_bias(channels);
  for (size_t o = 0; o < channels; ++o) {
    const double scale = gamma[o] / std::sqrt(var[o] + eps);
    for (size_t i = 0; i < per_channel; ++i) new_weight[o * per_channel + i] = weight[o * per_channel + i] * scale;
    new_bias[o] = (bias[o] - mean[o]) * scale + beta[o];
  }
  FoldedConv out;
  const Shape weight_shape = w.shape;  // copy: adding tensors may move the descriptors
  out.weight = add_f32_constant(g, conv.name + ".bn_folded_weight", weight_shape, new_weight);
  out.bias = add_f32_constant(g, conv.name + (with_beta ? ".bn_folded_bias" : ".bn_folded_offset"),
                              Shape{static_cast<int64_t>(channels)}, new_bias);
  done_.emplace(key, out);
  return out;
}

}  // namespace pock
