// Which parameters train: the recipe's `trainable` rules resolved against parameter names.
#pragma once
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pock/compiler.hpp"

namespace pock {

// Shell-style glob over a whole name: '*' matches any run of characters (dots included), '?' one.
bool glob_match(std::string_view pattern, std::string_view name);

// Marks the selected parameters trainable and returns them in graph order. No rules: every
// parameter except `excluded` (e.g. BatchNorm running statistics). A rule matching nothing, or a
// rule using a selector this compiler does not implement yet, is an error naming the rule.
Result<std::vector<TensorId>> select_trainable(Graph& graph, const std::vector<TrainableRule>& rules,
                                               const std::unordered_set<TensorId>& excluded);

}  // namespace pock
