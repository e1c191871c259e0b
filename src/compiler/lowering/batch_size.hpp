// recipe.batch_size: recompiles the model's shapes for another batch size.
#pragma once
#include "pock/compiler/graph.hpp"

namespace pock {

// Sets dimension 0 of every model input (rank >= 1) to `batch_size` and re-runs shape inference
// over the nodes in order. A node whose attributes pin the old batch size (e.g. a Reshape with a
// literal batch dimension) fails inference with an error naming it.
Status set_batch_size(Graph& graph, int64_t batch_size);

}  // namespace pock
