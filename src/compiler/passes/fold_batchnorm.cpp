// BatchNorm folding: an inference-form BatchNorm right after a frozen Conv2d is a per-channel
// affine map of the convolution's output, so it can be baked into the convolution's weight and
// bias at compile time:
//   s = gamma / sqrt(var + eps),   w'[o] = w[o] * s[o],   b'[o] = (b[o] - mean[o]) * s[o] + beta[o].
// This is what makes the inference function, and the frozen backbone of sparse training, cheaper:
// one op and one activation fewer per conv-BN block. Only values that cannot change while the
// engine runs are folded (is_fixed_f32), and only when the BatchNorm is the convolution's sole
// reader, so the pre-normalization tensor is not needed by anything else (a backward pass, say).
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include "compiler/passes/passes.hpp"
#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

constexpr size_t kGamma = 1, kBeta = 2, kMean = 3, kVar = 4;

struct FoldedConv {
  TensorId weight = kNoTensor, bias = kNoTensor;
};

// Inputs of one fold; the infer and eval functions fold the same layer with the same tensors and
// then share one pair of new constants.
using FoldKey = std::tuple<TensorId, TensorId, TensorId, TensorId, TensorId, TensorId, uint64_t>;

uint64_t bits_of(double v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

FoldedConv fold(Graph& g, const Node& conv, const Node& bn) {
  const TensorDesc& w = g.tensor(conv.inputs[1]);
  const TensorId bias_id = conv.inputs.size() > 2 ? conv.inputs[2] : kNoTensor;
  const std::vector<double> weight = f32_values(w);
  const std::vector<double> gamma = f32_values(g.tensor(bn.inputs[kGamma]));
  const std::vector<double> beta = f32_values(g.tensor(bn.inputs[kBeta]));
  const std::vector<double> mean = f32_values(g.tensor(bn.inputs[kMean]));
  const std::vector<double> var = f32_values(g.tensor(bn.inputs[kVar]));
  const std::vector<double> bias = bias_id == kNoTensor ? std::vector<double>(gamma.size(), 0.0)
                                                        : f32_values(g.tensor(bias_id));
  const double eps = bn.attrs.get_float("eps", 1e-5);
  const size_t channels = gamma.size();
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
  out.bias = add_f32_constant(g, conv.name + ".bn_folded_bias", Shape{static_cast<int64_t>(channels)}, new_bias);
  return out;
}

// The BatchNorm at `k` folds into its input's producer when everything it reads is fixed and the
// convolution's output goes nowhere else.
int foldable_conv(const Graph& g, const FunctionDef& fn, const FunctionUses& uses,
                  const std::unordered_set<TensorId>& mutated, const std::vector<bool>& removed, size_t k) {
  const Node& bn = fn.nodes[k];
  if (bn.op != "BatchNorm" || bn.inputs.size() != 5 || bn.outputs.size() != 1) return -1;
  const TensorId x = bn.inputs[0];
  const int p = uses.producer(x);
  if (p < 0 || removed[static_cast<size_t>(p)]) return -1;
  const Node& conv = fn.nodes[static_cast<size_t>(p)];
  if (conv.op != "Conv2d" || has_fused_activation(conv) || conv.outputs.size() != 1) return -1;
  if (uses.is_signature(x) || uses.readers(x).size() != 1) return -1;
  if (g.tensor(x).dtype != DType::kF32) return -1;
  for (size_t i = kGamma; i <= kVar; ++i) {
    if (!is_fixed_f32(g, mutated, bn.inputs[i])) return -1;
  }
  if (!is_fixed_f32(g, mutated, conv.inputs[1])) return -1;
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoTensor && !is_fixed_f32(g, mutated, conv.inputs[2])) return -1;
  return p;
}

}  // namespace

int fold_batchnorms(TrainingProgram& program) {
  Graph& g = program.graph;
  const std::unordered_set<TensorId> mutated = mutated_tensors(program);
  std::map<FoldKey, FoldedConv> folded_before;
  int folded = 0;
  for (FunctionDef& fn : program.functions) {
    const FunctionUses uses(fn);
    std::vector<bool> removed(fn.nodes.size(), false);
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const int p = foldable_conv(g, fn, uses, mutated, removed, k);
      if (p < 0) continue;
      Node& conv = fn.nodes[static_cast<size_t>(p)];
      const Node& bn = fn.nodes[k];
      const TensorId bias = conv.inputs.size() > 2 ? conv.inputs[2] : kNoTensor;
      const FoldKey key{conv.inputs[1], bias,           bn.inputs[kGamma], bn.inputs[kBeta],
                        bn.inputs[kMean], bn.inputs[kVar], bits_of(bn.attrs.get_float("eps", 1e-5))};
      auto it = folded_before.find(key);
      if (it == folded_before.end()) it = folded_before.emplace(key, fold(g, conv, bn)).first;
      // The convolution now writes the BatchNorm's output; its own output tensor is left unused.
      conv.inputs = {conv.inputs[0], it->second.weight, it->second.bias};
      conv.outputs = bn.outputs;
      removed[k] = true;
      ++folded;
    }
    remove_nodes(fn, removed);
  }
  return folded;
}

}  // namespace pock
