// What the rewriting passes (fold_batchnorm, fuse_bias_add, fuse_activation) ask before they
// replace a pattern of nodes: who reads a tensor inside a function, and which tensors hold values
// that are fixed when the blob is compiled (so that arithmetic on them can move to compile time).
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/program.hpp"

namespace pock {

// One read of a tensor: node index in the function and input slot.
struct TensorUse {
  size_t node = 0;
  size_t slot = 0;
};

// Producers and readers of every tensor of one function, taken when constructed: a pass that
// rewrites nodes takes a new one before it looks for the next kind of pattern.
class FunctionUses {
 public:
  explicit FunctionUses(const FunctionDef& fn);
  // Node index that writes `id` as an output, or -1 (inputs, parameters, constants, state).
  int producer(TensorId id) const;
  const std::vector<TensorUse>& readers(TensorId id) const;
  // Read or written by the caller: a function input, output or its loss. Never rewritten away.
  bool is_signature(TensorId id) const { return signature_.count(id) != 0; }

 private:
  std::unordered_map<TensorId, int> producer_;
  std::unordered_map<TensorId, std::vector<TensorUse>> readers_;
  std::unordered_set<TensorId> signature_;
};

// Tensors that some node of some function writes in place (schema mutated_inputs).
std::unordered_set<TensorId> mutated_tensors(const TrainingProgram& program);

// True when `id` is an f32 tensor whose value cannot change while an engine runs the blob: a
// constant, a frozen parameter (the runtime refuses set_parameter on those), or state that no
// function mutates; and its data is there.
bool is_fixed_f32(const Graph& g, const std::unordered_set<TensorId>& mutated, TensorId id);

// The values of a fixed f32 tensor, widened to double.
std::vector<double> f32_values(const TensorDesc& t);

// Adds an f32 constant holding `values` rounded to float (a taken name gets a suffix).
TensorId add_f32_constant(Graph& g, const std::string& name, const Shape& shape, const std::vector<double>& values);

// Drops the nodes marked in `removed`, keeping the order of the rest. Returns how many went.
int remove_nodes(FunctionDef& fn, const std::vector<bool>& removed);

// True when a Conv2d / Linear node already carries a fused activation (attribute "activation").
bool has_fused_activation(const Node& n);

}  // namespace pock
