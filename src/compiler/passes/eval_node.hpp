// Runs one node on host buffers with the reference kernels, at compile time (constant folding).
#pragma once
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

// `inputs[i]` points at the bytes of node.inputs[i] (nullptr for an omitted input); `outputs`
// are resized and filled.
Status evaluate_node(const Graph& graph, const Node& node, const std::vector<const void*>& inputs,
                     std::vector<std::vector<uint8_t>>* outputs);

}  // namespace pock
