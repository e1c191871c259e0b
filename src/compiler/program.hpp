// The compiler's working form: shared tensors plus one node list per function (infer, train,
// eval). Autodiff and the passes rewrite functions; emit.cpp lays them out into a ProgramSpec.
#pragma once
#include <string>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

struct FunctionDef {
  std::string name;
  std::vector<Node> nodes;       // in schedule order
  std::vector<TensorId> inputs;  // set by the caller before a run
  std::vector<TensorId> outputs; // read by the caller after a run
  TensorId loss = kNoTensor;
  // Index of the first backward node (train function): activations produced before it and read
  // after it are the "saved activations" of the memory report. -1 when there is no backward.
  int32_t backward_begin = -1;
};

struct TrainingProgram {
  Graph graph;  // owns every tensor; its own node list is the imported forward model
  std::vector<FunctionDef> functions;
  TensorId step = kNoTensor;  // i64 scalar state tensor advanced by the runtime each train step
  std::string metadata;       // JSON
  std::string lora;           // JSON: the LoRA adapters added (lowering/lora.hpp), "" for none
  // Memory spaces other than the host's, by the name of the backend that owns each (placement);
  // tensor_space[id] is 0 for host, k for memory_spaces[k - 1]. Empty: everything is host memory.
  std::vector<std::string> memory_spaces;
  std::vector<uint8_t> tensor_space;
  uint8_t space_of(TensorId id) const {
    return static_cast<size_t>(id) < tensor_space.size() ? tensor_space[static_cast<size_t>(id)] : 0;
  }
  FunctionDef* function(const std::string& name) {
    for (auto& f : functions) if (f.name == name) return &f;
    return nullptr;
  }
};

}  // namespace pock
