// The compiler's working form: shared tensors plus one node list per function (infer, train,
// eval). Autodiff and the passes rewrite functions; emit.cpp lays them out into a ProgramSpec.
#pragma once
#include <string>
#include <vector>

#include "pock/graph.hpp"

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
  FunctionDef* function(const std::string& name) {
    for (auto& f : functions) if (f.name == name) return &f;
    return nullptr;
  }
};

}  // namespace pock
