// The model's numbered blocks (a transformer's decoder or encoder layers), as the recipe's
// `trainable[].blocks` and `lora.layers` see them. Unlike `trainable[].layers`, which counts
// every Linear/norm/embedding node, a block is every parameter whose name carries the same
// block number: "model.layers.3.self_attn.q_proj.weight" and "model.layers.3.mlp.up_proj.weight"
// are both in block 3 — the unit the paper's "last k blocks" and peft's layers_to_transform mean.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "compiler/sparse/layers.hpp"
#include "pock/compiler/graph.hpp"

namespace pock {

// The block number in a parameter or module name: its first all-digit component that has a
// component before and after it ("model.layers.3.mlp" -> 3, "bert.encoder.layer.11.output.dense"
// -> 11). None for names outside blocks ("lm_head.weight", "model.norm.weight"). peft's default
// layers pattern takes the last such component; the two differ only on names with two numbers.
std::optional<int64_t> block_index(std::string_view name);

// 1 + the largest block number among the graph's parameters; 0 when no parameter is in a block.
size_t count_blocks(const Graph& graph);

// "last:k", "first:k" or "a:b" over the model's `count` blocks (parse_layer_span's grammar); errors
// say how many blocks the model has.
Result<LayerSpan> parse_block_span(std::string_view spec, size_t count);

// Whether `name` lies in a block of `span`.
bool in_block_span(std::string_view name, const LayerSpan& span);

}  // namespace pock
