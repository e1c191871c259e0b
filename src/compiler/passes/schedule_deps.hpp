// The orderings a schedule of one function must keep: data dependencies, and the order that
// in-place mutation imposes. A node that writes a tensor in place (an optimizer update, a
// BatchNormTrain updating running statistics, AccumulateGrad) runs after every node that reads
// the tensor's previous value and before every node that reads its new value; two writers of one
// tensor keep their order. Readers between two writers may reorder among themselves.
#pragma once
#include <vector>

#include "compiler/program.hpp"

namespace pock {

struct NodeDeps {
  std::vector<std::vector<size_t>> successors;  // may repeat an edge; predecessors counts repeats
  std::vector<int> predecessors;                // how many edges enter each node
};

NodeDeps node_dependencies(const std::vector<Node>& nodes);

// An optimizer update: writes a trainable parameter in place (what reorder_updates moves).
bool is_parameter_update(const Graph& g, const Node& n);

}  // namespace pock
