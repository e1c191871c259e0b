#include "compiler/passes/schedule_deps.hpp"

#include <algorithm>
#include <unordered_map>

#include "ir/op_schema.hpp"

namespace pock {
namespace {

bool mutates(const OpSchema* schema, size_t slot) {
  return schema && std::find(schema->mutated_inputs.begin(), schema->mutated_inputs.end(), static_cast<int>(slot)) !=
                       schema->mutated_inputs.end();
}

// Where one mutated tensor stands while walking the nodes in their original order.
struct MutationEpoch {
  int last_writer = -1;
  std::vector<size_t> readers_since;  // readers of the value last_writer left
};

}  // namespace

NodeDeps node_dependencies(const std::vector<Node>& nodes) {
  NodeDeps deps;
  deps.successors.resize(nodes.size());
  deps.predecessors.assign(nodes.size(), 0);
  auto edge = [&](size_t from, size_t to) {
    deps.successors[from].push_back(to);
    ++deps.predecessors[to];
  };
  std::unordered_map<TensorId, size_t> producer;
  std::unordered_map<TensorId, MutationEpoch> epochs;  // only tensors that some node mutates
  for (size_t k = 0; k < nodes.size(); ++k) {
    const OpSchema* schema = SchemaRegistry::global().find(nodes[k].op);
    for (size_t s = 0; s < nodes[k].inputs.size(); ++s) {
      if (nodes[k].inputs[s] != kNoTensor && mutates(schema, s)) epochs.try_emplace(nodes[k].inputs[s]);
    }
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    const OpSchema* schema = SchemaRegistry::global().find(n.op);
    std::vector<TensorId> seen;  // a tensor read twice by one node is one dependency
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const TensorId id = n.inputs[s];
      if (id == kNoTensor || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      auto p = producer.find(id);
      if (p != producer.end()) edge(p->second, k);
      auto e = epochs.find(id);
      if (e == epochs.end()) continue;
      MutationEpoch& epoch = e->second;
      bool writes = false;
      for (size_t t = s; t < n.inputs.size(); ++t) writes = writes || (n.inputs[t] == id && mutates(schema, t));
      if (epoch.last_writer >= 0) edge(static_cast<size_t>(epoch.last_writer), k);
      if (writes) {
        for (size_t r : epoch.readers_since) edge(r, k);
        epoch.last_writer = static_cast<int>(k);
        epoch.readers_since.clear();
      } else {
        epoch.readers_since.push_back(k);
      }
    }
    for (TensorId out : n.outputs) producer[out] = k;
  }
  return deps;
}

bool is_parameter_update(const Graph& g, const Node& n) {
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  if (!schema) return false;
  for (int i : schema->mutated_inputs) {
    if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] != kNoTensor) {
      const TensorDesc& t = g.tensor(n.inputs[i]);
      if (t.kind == TensorKind::kParameter && t.trainable) return true;
    }
  }
  return false;
}

}  // namespace pock
