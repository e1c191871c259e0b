#include <sstream>
#include <unordered_map>

#include "compiler/passes/passes.hpp"

namespace pock {
namespace {

// A textual key of (op, inputs, attributes): two nodes with the same key compute the same values.
std::string node_key(const Node& n) {
  std::ostringstream key;
  key << n.op << '(';
  for (TensorId in : n.inputs) key << in << ',';
  key << ')';
  for (const auto& [name, value] : n.attrs.items()) {
    key << name << '=';
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>) {
            key << '[';
            for (const auto& e : v) key << e << ' ';
            key << ']';
          } else {
            key << v;
          }
        },
        value);
    key << ';';
  }
  return key.str();
}

}  // namespace

int eliminate_common_subexpressions(TrainingProgram& program, FunctionDef& fn) {
  (void)program;
  std::unordered_map<std::string, const Node*> seen;
  std::unordered_map<TensorId, TensorId> replace;
  std::vector<Node> kept;
  kept.reserve(fn.nodes.size());  // never reallocates below, so pointers into it stay valid
  int merged = 0;
  auto is_signature = [&](TensorId id) {
    for (TensorId o : fn.outputs) if (o == id) return true;
    return id == fn.loss;
  };
  for (Node& n : fn.nodes) {
    for (TensorId& in : n.inputs) {
      auto it = replace.find(in);
      if (it != replace.end()) in = it->second;
    }
    bool mergeable = !has_side_effects(n);
    for (TensorId out : n.outputs) mergeable = mergeable && !is_signature(out);
    if (mergeable) {
      const std::string key = node_key(n);
      auto it = seen.find(key);
      if (it != seen.end() && it->second->outputs.size() == n.outputs.size()) {
        for (size_t i = 0; i < n.outputs.size(); ++i) replace[n.outputs[i]] = it->second->outputs[i];
        ++merged;
        continue;
      }
      kept.push_back(std::move(n));
      seen[key] = &kept.back();
    } else {
      kept.push_back(std::move(n));
    }
  }
  for (TensorId& out : fn.outputs) {
    auto it = replace.find(out);
    if (it != replace.end()) out = it->second;
  }
  fn.nodes = std::move(kept);
  return merged;
}

}  // namespace pock
