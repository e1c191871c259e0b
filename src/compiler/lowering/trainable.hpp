// Which parameters train: the recipe's `trainable` rules (the sparse-BP selection language of
// docs/recipe.md, resolved in src/compiler/sparse/) applied to the graph's parameters.
#pragma once
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pock/compiler/compiler.hpp"

namespace pock {

// Whole-name glob: '*' any run of characters (dots included), '?' one, {a-b} a number in range,
// {x,y} alternatives (compiler/sparse/name_glob.hpp).
bool glob_match(std::string_view pattern, std::string_view name);

// Marks the selected parameters trainable, records partial-channel updates in
// TensorDesc::channels (-1 elsewhere), and returns the trainable parameters in graph order. No
// rules: every float parameter except `excluded` (e.g. BatchNorm running statistics). Rules
// combine by union; a layer whose weight trains also trains its bias. A rule selecting nothing, a
// malformed selector or a selected non-float parameter is an error naming the rule and field.
Result<std::vector<TensorId>> select_trainable(Graph& graph, const std::vector<TrainableRule>& rules,
                                               const std::unordered_set<TensorId>& excluded);

}  // namespace pock
