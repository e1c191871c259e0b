// Resolves one rule of the recipe's `trainable` list (see docs/recipe.md) to the parameters it
// selects. The rule's selectors intersect: `match` (a name glob), `layers` (a span of layer
// positions), `bias_only` (biases only); `channels` / `channel_ratio` then limit the selected
// weights (parameters with two or more dims) to their leading rows.
#pragma once
#include <cstdint>
#include <map>
#include <unordered_set>
#include <vector>

#include "compiler/sparse/layers.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

// What every rule is resolved against, computed once per model.
struct SelectionContext {
  const Graph* graph = nullptr;
  std::unordered_set<TensorId> excluded;  // never trainable (BatchNorm running statistics)
  std::vector<Layer> layers;
  std::unordered_set<TensorId> biases;
};

SelectionContext make_selection_context(const Graph& graph, std::unordered_set<TensorId> excluded);

// Selected parameter -> its trained leading rows (-1: all rows).
using RowSelection = std::map<TensorId, int64_t>;

// Errors name the rule and the field: "trainable[1].match: 'encoder.*' matches no parameter of
// the model", "trainable[0].layers: 'last:9' needs 1 <= k <= 4 (the model has 4 layers)".
Result<RowSelection> select_by_rule(const SelectionContext& ctx, const TrainableRule& rule, size_t index);

// Union of two selections: a parameter trains the larger row count (-1, all rows, wins).
void merge_selection(RowSelection& into, const RowSelection& more);

// The paper's rule: a layer whose weight trains (any rows) also trains its bias, in full.
void add_biases_of_trained_weights(const SelectionContext& ctx, RowSelection& selection);

}  // namespace pock
