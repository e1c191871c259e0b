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

// One node list. The Pads stay in it: a Pad no one reads any more is dropped from every function
// built from the list by the dead-code pass, and the list keeps its positions, which seed the
// Dropout masks (train_mode.cpp), so the fold does not change a model's random stream.
int fold_node_list(const Graph& g, std::vector<Node>& nodes) {
  FunctionDef fn;  // FunctionUses reads a function
  fn.nodes = std::move(nodes);
  const FunctionUses uses(fn);
  int folded = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    Ints hw;
    if (!spatial_zero_pads(g, fn.nodes[k], &hw)) continue;
    for (const TensorUse& use : uses.readers(fn.nodes[k].outputs[0])) {
      Node& conv = fn.nodes[use.node];
      if (!reads_as_image(conv, use)) continue;
      Ints pads = conv.attrs.get_ints("pads", {0, 0, 0, 0});
      for (size_t i = 0; i < 4; ++i) pads[i] += hw[i];
      conv.attrs.set("pads", pads);
      conv.inputs[0] = fn.nodes[k].inputs[0];
      ++folded;
    }
  }
  nodes = std::move(fn.nodes);
  return folded;
}

}  // namespace

int fold_pads_into_convs(Graph& g) {
  int folded = fold_node_list(g, g.mutable_nodes());
  for (GraphFunction& f : g.mutable_functions()) folded += fold_node_list(g, f.nodes);
  return folded;
}

}  // namespace pock
