#include "compiler/lowering/quantize_source.hpp"

#include <cstring>

#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "ir/block_format.hpp"

namespace pock {
namespace {

bool frozen_f32_matrix(const Graph& g, TensorId id, const std::unordered_set<TensorId>& mutated) {
  const TensorDesc& w = g.tensor(id);
  return w.kind == TensorKind::kParameter && !w.trainable && w.dtype == DType::kF32 && w.shape.size() == 2 && w.data &&
         w.data->size() == w.nbytes() && !mutated.count(id);
}

// The source blocks of `w` when they describe it: a known format and exactly its rows.
const SourceBlocks* usable_source(const TensorDesc& w) {
  const SourceBlocks* s = w.source_blocks.get();
  if (!s || !s->rows) return nullptr;
  const std::optional<BlockFormat> f = parse_block_format(s->format);
  if (!f) return nullptr;
  const int64_t row_bytes = block_row_bytes(*f, w.shape[1]);
  return row_bytes > 0 && static_cast<int64_t>(s->rows->size()) == row_bytes * w.shape[0] ? s : nullptr;
}

// The blocks of weight `id`, made once; constant kNoTensor when the mode leaves it f32.
BlockWeights::Blocks make_blocks(Graph& g, TensorId id, const std::string& mode) {
  const TensorDesc w = g.tensor(id);  // a copy: adding tensors moves the table
  const SourceBlocks* source = usable_source(w);
  BlockWeights::Blocks out;
  std::vector<uint8_t> rows;
  if (source && (mode == "source" || source->format == "q8_0")) {
    out.format = source->format;
    rows = *source->rows;
  } else if (mode == "q8_0" && block_row_bytes(BlockFormat::kQ8_0, w.shape[1]) > 0) {
    std::vector<float> values(static_cast<size_t>(numel(w.shape)));
    std::memcpy(values.data(), w.data->data(), w.data->size());
    auto q = gguf::from_f32(gguf::kQ8_0, values.data(), values.size());
    if (!q.is_ok()) return out;
    out.format = "q8_0";
    rows = std::move(q.value());
  } else {
    return out;
  }
  const int64_t row_bytes = static_cast<int64_t>(rows.size()) / w.shape[0];
  const std::string name = w.name + "." + out.format;  // "<weight>.q4_1", where free
  out.constant = g.add_constant(g.find(name) == kNoTensor ? name : g.unique_name(name), DType::kU8, {w.shape[0], row_bytes},
                                std::move(rows));
  return out;
}

}  // namespace

Result<int> quantize_frozen_to_blocks(Graph& g, std::vector<Node>& nodes, const std::unordered_set<TensorId>& mutated,
                                      BlockWeights& shared) {
  int rewritten = 0;
  for (Node& n : nodes) {
    const bool linear = n.op == "Linear" && n.inputs.size() >= 2 && n.attrs.get_string("activation", "none") == "none" &&
                        g.tensor(n.inputs[0]).dtype == DType::kF32;
    const bool gather = n.op == "Gather" && n.inputs.size() == 2 && n.attrs.get_int("axis", 0) == 0;
    if (!linear && !gather) continue;
    const TensorId weight = n.inputs[linear ? 1 : 0];
    if (!frozen_f32_matrix(g, weight, mutated)) continue;
    auto it = shared.by_weight.find(weight);
    if (it == shared.by_weight.end()) it = shared.by_weight.emplace(weight, make_blocks(g, weight, shared.mode)).first;
    const TensorId blocks = it->second.constant;
    if (blocks == kNoTensor) continue;
    n.attrs = Attrs{{"format", it->second.format}, {"in_features", g.tensor(weight).shape[1]}};
    const std::optional<BlockFormat> format = parse_block_format(it->second.format);
    // A GatherQ too: its cpu kernel then reads the rows from the int8 products' pack of a tied table.
    if (shared.int8_compute && format && has_int8_view(*format)) n.attrs.set("compute", std::string("int8"));
    if (linear) {
      n.op = "LinearQ";
      n.inputs = {n.inputs[0], blocks, n.inputs.size() > 2 ? n.inputs[2] : kNoTensor};
    } else {
      n.op = "GatherQ";
      n.inputs = {blocks, n.inputs[1]};
    }
    ++rewritten;
  }
  return rewritten;
}

}  // namespace pock
