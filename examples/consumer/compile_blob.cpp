// The build-host half of the consumer: builds a tiny trainable graph with the compiler component
// (pock::compiler) and writes its blob. Usage: pock_consumer_compile OUT.pock
#include <cstdio>

#include <pock/compiler/compiler.hpp>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: pock_consumer_compile OUT.pock\n"), 2;
  pock::Graph graph;
  const pock::TensorId x = graph.add_input("x", pock::DType::kF32, {1, 4});
  const pock::TensorId bias = graph.add_parameter_f32("bias", {4}, {0.5f, -0.5f, 1.0f, -1.0f});
  auto sum = graph.add_node("Add", {x, bias}, {}, "add");
  if (!sum.is_ok()) return std::fprintf(stderr, "graph: %s\n", sum.status().to_string().c_str()), 1;
  auto y = graph.add_node("Relu", {sum.value()[0]}, {}, "relu");
  if (!y.is_ok()) return std::fprintf(stderr, "graph: %s\n", y.status().to_string().c_str()), 1;
  if (!graph.mark_output(y.value()[0], "y").is_ok()) return 1;

  pock::Recipe recipe;  // the bias learns to move y towards "target"
  recipe.loss.type = "mse";
  recipe.loss.logits = "y";
  recipe.loss.labels = "target";
  recipe.optimizer.lr = 0.1;
  const pock::Status s = pock::compile_to_file(graph, &recipe, argv[1]);
  if (!s.is_ok()) return std::fprintf(stderr, "compile: %s\n", s.to_string().c_str()), 1;
  std::printf("wrote %s\n", argv[1]);
  return 0;
}
