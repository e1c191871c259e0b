// Builds a tiny graph, compiles it to a blob and runs it, using only the installed headers and
// libraries. Exits non-zero when anything differs from the expected result.
#include <cmath>
#include <cstdio>
#include <vector>

#include <pock/compiler.hpp>
#include <pock/engine.hpp>

int main() {
  pock::Graph graph;
  const pock::TensorId x = graph.add_input("x", pock::DType::kF32, {1, 4});
  const pock::TensorId bias = graph.add_parameter_f32("bias", {4}, {0.5f, -0.5f, 1.0f, -1.0f});
  auto sum = graph.add_node("Add", {x, bias}, {}, "add");
  if (!sum.is_ok()) return std::fprintf(stderr, "graph: %s\n", sum.status().to_string().c_str()), 1;
  auto y = graph.add_node("Relu", {sum.value()[0]}, {}, "relu");
  if (!y.is_ok()) return std::fprintf(stderr, "graph: %s\n", y.status().to_string().c_str()), 1;
  if (!graph.mark_output(y.value()[0], "y").is_ok()) return 1;

  auto blob = pock::compile(graph, nullptr);
  if (!blob.is_ok()) return std::fprintf(stderr, "compile: %s\n", blob.status().to_string().c_str()), 1;
  auto engine = pock::Engine::open_buffer(blob->data(), blob->size());
  if (!engine.is_ok()) return std::fprintf(stderr, "open: %s\n", engine.status().to_string().c_str()), 1;
  if (!engine->set_input("x", std::vector<float>{1, 1, -3, 3}).is_ok()) return 1;
  if (pock::Status s = engine->infer(); !s.is_ok()) return std::fprintf(stderr, "infer: %s\n", s.to_string().c_str()), 1;
  auto out = engine->output<float>("y");
  if (!out.is_ok()) return 1;

  const std::vector<float> expected = {1.5f, 0.5f, 0.0f, 2.0f};
  std::printf("y =");
  bool ok = out->size() == expected.size();
  for (size_t i = 0; i < out->size(); ++i) {
    std::printf(" %g", (*out)[i]);
    ok = ok && std::fabs((*out)[i] - expected[i]) < 1e-6f;
  }
  std::printf("  (%zu-byte blob) %s\n", blob->size(), ok ? "as expected" : "WRONG");
  return ok ? 0 : 1;
}
