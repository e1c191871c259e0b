// End to end without training: build a graph in C++, compile, load, infer.
#include <catch2/catch.hpp>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;

TEST_CASE("a compiled graph infers through the C++ API", "[engine]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 3});
  const TensorId b = g.add_parameter_f32("bias", {3}, {1.0f, -2.0f, 0.5f});
  auto sum = g.add_node("Add", {x, b});
  REQUIRE(sum.is_ok());
  auto y = g.add_node("Relu", {sum.value()[0]});
  REQUIRE(y.is_ok());
  REQUIRE(g.mark_output(y.value()[0], "y").is_ok());

  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("x", std::vector<float>{1, 1, 1, -3, 5, -1}).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto out = engine->output<float>("y");
  REQUIRE(out.is_ok());
  CHECK(out.value() == std::vector<float>{2, 0, 1.5f, 0, 3, 0});
}

TEST_CASE("a wrong input size is refused with the tensor named", "[engine]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4});
  auto y = g.add_node("Neg", {x});
  REQUIRE(y.is_ok());
  REQUIRE(g.mark_output(y.value()[0], "y").is_ok());
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  Status s = engine->set_input("x", std::vector<float>{1, 2, 3});
  CHECK(s.code() == Code::kShapeMismatch);
  CHECK(s.message().find("'x'") != std::string::npos);
  CHECK(engine->set_input("nope", std::vector<float>{1}).code() == Code::kNotFound);
}

TEST_CASE("an op with the wrong arity is refused when building", "[ir]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4});
  auto y = g.add_node("Add", {x}, {}, "lonely_add");
  REQUIRE_FALSE(y.is_ok());
  CHECK(y.status().message().find("lonely_add") != std::string::npos);
  auto z = g.add_node("NoSuchOp", {x});
  CHECK(z.status().code() == Code::kUnsupportedOp);
}
