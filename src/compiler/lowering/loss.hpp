// The recipe's loss: which model tensor it reads, the label input it creates, and the loss node.
#pragma once
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"

namespace pock {

// The model tensor the loss reads: recipe.loss.logits by name, or the model's only output.
Result<TensorId> resolve_loss_source(const Graph& model, const Recipe::Loss& loss);
// Creates (or reuses, when a matching input already exists) the kInput tensor the loss compares
// against: i64 class indices for cross_entropy, a float target for mse; kNoTensor for "output".
Result<TensorId> create_label_input(Graph& graph, const Recipe::Loss& loss, TensorId source);
// Appends the loss node(s) over `prediction` (a function's clone of the source) to `nodes`;
// returns the persistent f32 scalar loss tensor, named `loss_name`.
Result<TensorId> append_loss(Graph& graph, std::vector<Node>& nodes, const Recipe::Loss& loss, TensorId prediction,
                             TensorId labels, const std::string& loss_name);

}  // namespace pock
