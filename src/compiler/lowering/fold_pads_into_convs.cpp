#include "compiler/lowering/fold_pads_into_convs.hpp"

#include <algorithm>
#include <vector>

#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

using Ints = std::vector<int64_t>;

// Pads above this are left as they are (their sums stay far from overflow).
constexpr int64_t kMaxPad = int64_t{1} << 30;

// The Pad's {top, left, bottom, right} when it is a constant-zero pad of an NCHW image's rows and
// columns only (no crop, no batch or channel padding), else false.
bool spatial_zero_pads(const Graph& g, const Node& pad, Ints* hw) {
  if (pad.op != "Pad" || pad.inputs.size() != 1 || pad.outputs.size() != 1) return false;
  if (pad.attrs.get_string("mode", "constant") != "constant" || pad.attrs.get_float("value", 0.0) != 0.0) return false;
  if (g.tensor(pad.inputs[0]).shape.size() != 4) return false;
  const Ints& p = pad.attrs.get_ints("pads", {});
  if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return false;
  for (int64_t v : p) {
    if (v < 0 || v > kMaxPad) return false;  // a crop, or a hostile size whose sum would overflow
  }
  *hw = {p[2], p[3], p[6], p[7]};
  return true;
}

// A Conv2d reading `id` as its image (slot 0), NCHW, its pads given or absent.
bool reads_as_image(const Node& n, const TensorUse& use) {
  if (n.op != "Conv2d" || use.slot != 0 || n.attrs.get_string("layout", "NCHW") != "NCHW") return false;
  const Ints& pads = n.attrs.get_ints("pads", {0, 0, 0, 0});
  return pads.size() == 4 && std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v >= 0 && v <= kMaxPad; });
}

// One node list; `keep`: tensors read from outside it (its outputs), whose Pad stays.
int fold_node_list(const Graph& g, std::vector<Node>& nodes, const std::vector<TensorId>& keep) {
  FunctionDef fn;  // FunctionUses reads a function: the list, with `keep` as its outputs
  fn.nodes = std::move(nodes);
  fn.outputs = keep;
  const FunctionUses uses(fn);
  std::vector<bool> removed(fn.nodes.size(), false);
  int folded = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    Ints hw;
    if (!spatial_zero_pads(g, fn.nodes[k], &hw)) continue;
    const TensorId padded = fn.nodes[k].outputs[0];
    size_t kept_readers = 0;
    for (const TensorUse& use : uses.readers(padded)) {
      Node& conv = fn.nodes[use.node];
      if (!reads_as_image(conv, use)) {
        ++kept_readers;
        continue;
      }
      Ints pads = conv.attrs.get_ints("pads", {0, 0, 0, 0});
      for (size_t i = 0; i < 4; ++i) pads[i] += hw[i];
      conv.attrs.set("pads", pads);
      conv.inputs[0] = fn.nodes[k].inputs[0];
      ++folded;
    }
    removed[k] = kept_readers == 0 && !uses.is_signature(padded);
  }
  nodes.clear();
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (!removed[k]) nodes.push_back(std::move(fn.nodes[k]));
  }
  return folded;
}

}  // namespace

int fold_pads_into_convs(Graph& g) {
  // A function beside the model reads the model's tensors only through its parameters and state,
  // but keep whatever it reads anyway.
  std::vector<TensorId> keep = g.outputs();
  for (const GraphFunction& f : g.functions()) {
    for (const Node& n : f.nodes) keep.insert(keep.end(), n.inputs.begin(), n.inputs.end());
  }
  int folded = fold_node_list(g, g.mutable_nodes(), keep);
  for (GraphFunction& f : g.mutable_functions()) folded += fold_node_list(g, f.nodes, f.outputs);
  return folded;
}

}  // namespace pock
