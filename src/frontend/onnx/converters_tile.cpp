// ONNX Tile of a tensor known only at run time (a constant one is folded at import), with
// constant repeats, as Reshape -> Expand -> Reshape (docs/ops.md): each repeated axis d gets a
// size-1 axis in front of it, which Expand broadcasts to repeats[d], and the final Reshape merges
// the pair, so that copy k of the input lands at [k * dims[d], (k + 1) * dims[d]) as Tile puts it.
// The gradient is Expand's: dy summed over the repeats.
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

Status convert_tile(NodeView& node) {
  const Shape& x = node.value(0).shape;
  POCK_ASSIGN_OR_RETURN(Ints repeats, node.const_ints(1, "repeats"));
  if (repeats.size() != x.size()) {
    return node.input_error(1, "(repeats) must hold one value per axis of " + shape_str(x) + ", got " + shape_str(repeats));
  }
  Ints split, expanded, merged;  // x with the repeat axes inserted; those axes broadcast; the output
  for (size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 0) return node.input_error(1, "(repeats) must not be negative, got " + shape_str(repeats));
    merged.push_back(x[d] * repeats[d]);
    if (repeats[d] == 1) {
      split.push_back(x[d]);
      expanded.push_back(x[d]);
    } else if (x[d] == 1) {  // a size-1 axis broadcasts as it is
      split.push_back(1);
      expanded.push_back(repeats[d]);
    } else {
      split.insert(split.end(), {1, x[d]});
      expanded.insert(expanded.end(), {repeats[d], x[d]});
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  if (merged == x) return node.bind_output(0, xt);
  if (split.size() > static_cast<size_t>(kMaxRank)) {
    return node.unsupported("tiling " + shape_str(x) + " by " + shape_str(repeats) + " needs rank " +
                            std::to_string(split.size()) + " on the way, more than " + std::to_string(kMaxRank));
  }
  TensorId split_t = xt;
  if (split != x) {
    POCK_ASSIGN_OR_RETURN(auto r, node.emit("Reshape", {xt}, Attrs{{"shape", split}}, "repeat_axes"));
    split_t = r[0];
  }
  POCK_ASSIGN_OR_RETURN(auto e, node.emit("Expand", {split_t}, Attrs{{"shape", expanded}}, "repeated"));
  if (expanded == merged) return node.bind_output(0, e[0]);
  return node.emit_final("Reshape", {e[0]}, Attrs{{"shape", merged}});
}

}  // namespace

void register_tile_converters(std::unordered_map<std::string, Converter>& t) { t["Tile"] = convert_tile; }

}  // namespace pock::onnx_import
