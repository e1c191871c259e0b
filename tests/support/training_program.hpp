// Test support: the training program the compiler builds from a model and a recipe, before the
// passes and the blob (what tests/compiler cannot read back from a blob: the functions' nodes).
#pragma once
#include <catch2/catch.hpp>

#include "compiler/program.hpp"
#include "compiler/training.hpp"

namespace pock::test {

// The infer function over the model's nodes, then build_training_functions (train, eval).
inline TrainingProgram build_training_program(const Graph& g, const Recipe& recipe, const CompileOptions& options = {}) {
  TrainingProgram program;
  program.graph = g;
  FunctionDef infer;
  infer.name = "infer";
  infer.nodes = g.nodes();
  for (TensorId id = 0; id < static_cast<TensorId>(g.num_tensors()); ++id) {
    if (g.tensor(id).kind == TensorKind::kInput) infer.inputs.push_back(id);
  }
  infer.outputs = g.outputs();
  program.functions.push_back(infer);
  REQUIRE(build_training_functions(program, recipe, options).is_ok());
  return program;
}

// A recipe that trains on the model's output "y" as the loss, SGD lr 0.01, in `precision`.
inline Recipe sgd_on_output_recipe(const char* precision) {
  auto r = parse_recipe(R"({"loss": {"type": "output", "logits": "y"}, "optimizer": {"type": "sgd", "lr": 0.01}})");
  REQUIRE(r.is_ok());
  r->precision = precision;
  return r.value();
}

}  // namespace pock::test
