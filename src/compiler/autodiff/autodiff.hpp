// The reverse-mode driver: walks a function's forward nodes backwards from the loss and asks each
// op's gradient rule (grad_rule.hpp) for the gradients of its inputs.
#pragma once
#include <unordered_map>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

struct Backward {
  std::vector<Node> nodes;                       // backward nodes in execution order
  std::unordered_map<TensorId, TensorId> grads;  // wrt tensor -> its gradient (absent: no path to the loss)
};

// Differentiates the scalar `loss` (produced by `forward`) with respect to the tensors `wrt`.
// Only nodes on a path from some `wrt` tensor to the loss emit backward nodes; several
// contributions to one gradient are summed with Add. A needed op without a rule is an error
// naming the op and node. Rules may add forward nodes (what they save for the backward in a
// smaller form, such as an activation mask): each goes into `forward` right after its node.
Result<Backward> build_backward(Graph& graph, std::vector<Node>& forward, TensorId loss,
                                const std::vector<TensorId>& wrt);

}  // namespace pock
