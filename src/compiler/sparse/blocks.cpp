#include "compiler/sparse/blocks.hpp"

#include <algorithm>
#include <charconv>

namespace pock {

std::optional<int64_t> block_index(std::string_view name) {
  size_t start = name.find('.');  // the first component never counts: it has nothing before it
  while (start != std::string_view::npos) {
    const size_t begin = start + 1;
    const size_t end = name.find('.', begin);
    if (end == std::string_view::npos) return std::nullopt;  // the last component never counts either
    const std::string_view part = name.substr(begin, end - begin);
    int64_t value = 0;
    const auto [stop, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && ec == std::errc() && stop == part.data() + part.size()) return value;
    start = end;
  }
  return std::nullopt;
}

size_t count_blocks(const Graph& graph) {
  size_t count = 0;
  for (const TensorDesc& t : graph.tensors()) {
    if (t.kind != TensorKind::kParameter) continue;
    if (const auto index = block_index(t.name)) count = std::max(count, static_cast<size_t>(*index) + 1);
  }
  return count;
}

Result<LayerSpan> parse_block_span(std::string_view spec, size_t count) {
  if (count == 0) {
    return Status(Code::kInvalidArgument, "'" + std::string(spec) + "': the model has no numbered blocks (parameter names like "
                                          "'model.layers.3.mlp.up_proj.weight')");
  }
  return parse_layer_span(spec, count, "blocks");
}

bool in_block_span(std::string_view name, const LayerSpan& span) {
  const auto index = block_index(name);
  return index && static_cast<size_t>(*index) >= span.begin && static_cast<size_t>(*index) < span.end;
}

}  // namespace pock
