// Bias-add fusion: Conv2d / Linear followed by an Add of a per-output-channel value becomes the
// same op with that value in its bias. Models converted from other frameworks often carry the
// bias as a separate Add (TF-style Conv + BiasAdd, MatMul + Add). It is exact up to where the
// float rounding happens: the sum is the same, it is just accumulated in the op (in double by the
// reference kernels) instead of rounded to float first and added after.
//   - a fixed addend (constant, frozen parameter, unmutated state) is baked into a new constant
//     bias, added to a fixed existing bias at compile time;
//   - a trainable addend of exactly the bias's shape [O] becomes the bias input itself when the
//     op had none (its gradient nodes already exist and do not read the forward values).
#include <map>
#include <utility>

#include "compiler/passes/passes.hpp"
#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

// Axis of the output channels: Conv2d NCHW -> 1, Linear [..., N] -> last.
int channel_axis(const Node& op, const Shape& out) {
  return op.op == "Conv2d" ? 1 : static_cast<int>(out.size()) - 1;
}

// True when `addend` broadcast against `out` varies at most along `axis`: right-aligned, every
// dim is 1 except, possibly, the one that lands on `axis`, which then equals out[axis].
bool is_per_channel(const Shape& addend, const Shape& out, int axis) {
  if (addend.size() > out.size()) return false;
  const size_t lead = out.size() - addend.size();
  for (size_t i = 0; i < addend.size(); ++i) {
    const size_t at = lead + i;
    const bool on_axis = static_cast<int>(at) == axis;
    if (addend[i] != 1 && !(on_axis && addend[i] == out[at])) return false;
  }
  return true;
}

// The addend's value for each of `channels` output channels (a broadcast scalar repeats).
std::vector<double> per_channel_values(const TensorDesc& addend, int64_t channels) {
  std::vector<double> v = f32_values(addend);
  if (v.size() == 1) v.assign(static_cast<size_t>(channels), v[0]);
  return v;
}

struct Match {
  size_t producer = 0;
  TensorId addend = kNoTensor;
};

// The Add at `k` as (producer, addend), when one operand is a bias-free-to-extend Conv2d / Linear
// output read by nothing else and the other a per-channel value.
bool match(const Graph& g, const FunctionDef& fn, const FunctionUses& uses, const std::vector<bool>& removed, size_t k,
           Match* m) {
  const Node& add = fn.nodes[k];
  if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return false;
  for (size_t side = 0; side < 2; ++side) {
    const TensorId y = add.inputs[side], addend = add.inputs[1 - side];
    if (y == addend) continue;
    const int p = uses.producer(y);
    if (p < 0 || removed[static_cast<size_t>(p)]) continue;
    const Node& op = fn.nodes[static_cast<size_t>(p)];
    if ((op.op != "Conv2d" && op.op != "Linear") || has_fused_activation(op) || op.outputs.size() != 1) continue;
    if (uses.is_signature(y) || uses.readers(y).size() != 1) continue;
    const TensorDesc& yt = g.tensor(y);
    const TensorDesc& at = g.tensor(addend);
    // An Add writing a bf16 GEMM operand (output_dtype, lowering/bf16_producers.hpp) stays: the
    // op would write its output in f32.
    const TensorDesc& sum = g.tensor(add.outputs[0]);
    if (yt.dtype != DType::kF32 || at.dtype != DType::kF32 || sum.dtype != DType::kF32 || sum.shape != yt.shape) continue;
    if (yt.shape.empty() || !is_per_channel(at.shape, yt.shape, channel_axis(op, yt.shape))) continue;
    m->producer = static_cast<size_t>(p);
    m->addend = addend;
    return true;
  }
  return false;
}

// Constant biases made so far, by (addend, old bias): the infer and eval functions fuse the same
// layer and share one.
using BiasCache = std::map<std::pair<TensorId, TensorId>, TensorId>;

// The new bias input, or kNoTensor when this addend cannot become part of the bias.
TensorId fused_bias(Graph& g, const FunctionDef& fn, const FunctionUses& uses,
                    const std::unordered_set<TensorId>& mutated, const Node& op, const Node& add, size_t add_index,
                    TensorId addend, BiasCache& cache) {
  const Shape out = g.tensor(op.outputs[0]).shape;
  const int64_t channels = out[static_cast<size_t>(channel_axis(op, out))];
  const TensorId bias = op.inputs.size() > 2 ? op.inputs[2] : kNoTensor;
  if (is_fixed_f32(g, mutated, addend) && (bias == kNoTensor || is_fixed_f32(g, mutated, bias))) {
    auto cached = cache.find({addend, bias});
    if (cached != cache.end()) return cached->second;
    std::vector<double> values = per_channel_values(g.tensor(addend), channels);
    if (bias != kNoTensor) {
      const std::vector<double> b = f32_values(g.tensor(bias));
      for (size_t i = 0; i < values.size(); ++i) values[i] += b[i];
    }
    return cache[{addend, bias}] = add_f32_constant(g, add.name + ".fused_bias", Shape{channels}, values);
  }
  // A live tensor as the bias: the op reads it earlier than the Add did, so nothing may write it
  // in between, and it must not be computed in this function after the op.
  const TensorDesc& a = g.tensor(addend);
  if (bias != kNoTensor || a.shape != Shape{channels}) return kNoTensor;
  if (a.kind != TensorKind::kParameter && a.kind != TensorKind::kState && a.kind != TensorKind::kConstant) {
    return kNoTensor;
  }
  const size_t op_index = static_cast<size_t>(uses.producer(op.outputs[0]));
  for (const TensorUse& u : uses.readers(addend)) {
    if (u.node > op_index && u.node < add_index && has_side_effects(fn.nodes[u.node])) return kNoTensor;
  }
  return addend;
}

}  // namespace

int fuse_bias_adds(TrainingProgram& program) {
  Graph& g = program.graph;
  const std::unordered_set<TensorId> mutated = mutated_tensors(program);
  BiasCache cache;
  int fused = 0;
  for (FunctionDef& fn : program.functions) {
    const FunctionUses uses(fn);
    std::vector<bool> removed(fn.nodes.size(), false);
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      Match m;
      if (!match(g, fn, uses, removed, k, &m)) continue;
      Node& op = fn.nodes[m.producer];
      const TensorId bias = fused_bias(g, fn, uses, mutated, op, fn.nodes[k], k, m.addend, cache);
      if (bias == kNoTensor) continue;
      op.inputs.resize(3, kNoTensor);
      op.inputs[2] = bias;
      op.outputs = fn.nodes[k].outputs;  // the op now writes the sum; its old output goes unused
      removed[k] = true;
      ++fused;
    }
    remove_nodes(fn, removed);
  }
  return fused;
}

}  // namespace pock
