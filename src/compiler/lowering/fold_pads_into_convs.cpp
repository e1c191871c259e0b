#include "compiler/lowering/fold_pads_into_convs.hpp"

#include <vector>

#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

using Ints = std::vector<int64_t>;

// The Pad's {top, left, bottom, right} when it is a constant-zero pad of an NCHW image's rows and
// columns only (no crop, no batch or channel padding), else false.
bool spatial_zero_pads(const Graph& g, const Node& pad, Ints* hw) {
  if (pad.op != "Pad" || pad.inputs.size() != 1 || pad.outputs.size() != 1) return false;
  if (pad.attrs.get_string("mode", "constant") != "constant" || pad.attrs.get_float("value", 0.0) != 0.0) return false;
  if (g.tensor(pad.inputs[0]).shape.size() != 4) return false;
  const Ints& p = pad.attrs.get_ints("pads", {});
  if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return false;
  for (int64_t v : p) {
    if (v < 0) return false;
  }
  *hw = {p[2], p[3], p[6], p[7]};
  return true;
}

// A Conv2d reading `id` as its image (slot 0), NCHW, its pads given or absent.
bool reads_as_image(const Node& n, const TensorUse& use) {
  return n.op == "Conv2d" && use.slot == 0 && n.attrs.get_string("layout", "NCHW") == "NCHW" &&
         n.attrs.get_ints("pads", {0, 0, 0, 0}).size() == 4;
}

}  // namespace

Result<int> fold_pads_into_convs(const Graph& g, FunctionDef& fn) {
  if (fn.backward_begin >= 0) {
    return Status(Code::kInternal, "fold_pads_into_convs: function '" + fn.name + "' already has a backward pass");
  }
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
  if (folded == 0) return 0;
  std::vector<Node> nodes;
  nodes.reserve(fn.nodes.size());
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (!removed[k]) nodes.push_back(std::move(fn.nodes[k]));
  }
  fn.nodes = std::move(nodes);
  return folded;
}

}  // namespace pock
