// f64 is an inference dtype: a graph computing in f64 compiles and runs, but a recipe that would
// train an f64 parameter, or send a gradient through an f64 tensor, is refused by name (never
// trained in f64, never narrowed to f32 without a word).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

std::vector<uint8_t> f64_bytes(const std::vector<double>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(double));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Recipe output_loss() {
  Recipe r;
  r.loss.type = "output";
  r.loss.logits = "loss";
  return r;
}

// Adds loss = sum(Cast<f32>(v)) and marks it as the output "loss".
void add_loss(Graph& g, TensorId v) {
  auto f = g.add_node("Cast", {v}, Attrs{{"to", std::string("f32")}});
  REQUIRE(f.is_ok());
  auto loss = g.add_node("ReduceSum", {f.value()[0]}, Attrs{{"keepdims", int64_t{0}}}, "loss", {"loss"});
  REQUIRE(loss.is_ok());
  REQUIRE(g.mark_output(loss.value()[0], "loss").is_ok());
}

// loss = sum(Cast<f32>(x + w)) with x an f64 input and w an f64 parameter.
Graph f64_parameter_graph() {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF64, {2});
  const TensorId w = g.add_parameter("w", DType::kF64, {2}, f64_bytes({0.5, -1.5}));
  auto sum = g.add_node("Add", {x, w});
  REQUIRE(sum.is_ok());
  add_loss(g, sum.value()[0]);
  REQUIRE(g.mark_output(sum.value()[0], "sum").is_ok());
  return g;
}

}  // namespace

TEST_CASE("a graph with an f64 parameter compiles for inference and runs in f64", "[compiler][f64]") {
  const Graph g = f64_parameter_graph();
  auto blob = compile(g, nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size(), Engine::Options{});
  REQUIRE(engine.is_ok());
  // 1e8 + 0.5 needs more than f32's 24 bits: it comes back exact only if the Add ran in f64.
  const std::vector<double> x = {1e8, 1.0};
  REQUIRE(engine->set_input("x", x.data(), sizeof(double) * x.size()).is_ok());
  REQUIRE(engine->infer().is_ok());
  std::vector<double> sum(2);
  REQUIRE(engine->get_output("sum", sum.data(), sizeof(double) * sum.size()).is_ok());
  CHECK(sum == std::vector<double>{1e8 + 0.5, -0.5});
}

TEST_CASE("a recipe that would train an f64 parameter is refused, naming it", "[compiler][f64]") {
  const Graph g = f64_parameter_graph();
  const Recipe r = output_loss();
  auto blob = compile(g, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK_THAT(blob.status().message(), Catch::Contains("parameter 'w' is f64"));
}

TEST_CASE("a gradient path through an f64 tensor is refused, naming the op", "[compiler][f64]") {
  // loss = sum(Cast<f32>(Cast<f64>(w) * 2)): w trains in f32, but its gradient would pass through f64.
  Graph g;
  const TensorId w = g.add_parameter_f32("w", {2}, {0.5f, -1.5f});
  const TensorId two = g.add_constant("two", DType::kF64, {2}, f64_bytes({2, 2}));
  auto wide = g.add_node("Cast", {w}, Attrs{{"to", std::string("f64")}}, "widen");
  REQUIRE(wide.is_ok());
  auto doubled = g.add_node("Mul", {wide.value()[0], two}, {}, "double_it");
  REQUIRE(doubled.is_ok());
  add_loss(g, doubled.value()[0]);
  const Recipe r = output_loss();
  auto blob = compile(g, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK_THAT(blob.status().message(), Catch::Contains("f64") && Catch::Contains("trainable parameter and the loss"));
}
