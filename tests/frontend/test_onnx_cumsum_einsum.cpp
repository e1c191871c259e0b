// ONNX import of CumSum (its constant axis input becomes pock's attribute) and Einsum on run-time
// operands (lowered to Transpose / Reshape / MatMul / ReduceSum / Mul by an identity mask). Expected
// numbers are the equations worked out by hand on small integers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;
using pock::testing::ops_of;

namespace {

// Einsum of `equation` over inputs "a" (and "b", "c") of the given shapes; output "y".
OnnxModel einsum_model(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes) {
  OnnxModel m(12);
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back(std::string(1, static_cast<char>('a' + i)));
    m.input(names.back(), shapes[i]);
  }
  auto& n = m.node("Einsum", names, {"y"}, "/einsum");
  OnnxModel::attr(n, "equation", equation);
  m.output("y");
  return m;
}

std::vector<float> run(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  auto blob = compile(g, nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  for (size_t i = 0; i < inputs.size(); ++i) REQUIRE(engine->set_input(std::string(1, static_cast<char>('a' + i)), inputs[i]).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto y = engine->output<float>("y");
  REQUIRE(y.is_ok());
  return y.value();
}

std::vector<float> einsum(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                          const std::vector<std::vector<float>>& inputs, Shape* out_shape = nullptr) {
  auto g = import_model(einsum_model(equation, shapes));
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  if (out_shape) *out_shape = g->tensor(g->find("y")).shape;
  return run(g.value(), inputs);
}

}  // namespace

TEST_CASE("ONNX CumSum reads its constant axis and keeps exclusive and reverse", "[onnx][cumulative]") {
  OnnxModel m(14);
  m.input("a", {2, 3});
  m.ints("axis", {}, {-1});
  auto& n = m.node("CumSum", {"a", "axis"}, {"y"}, "/cumsum");
  OnnxModel::attr(n, "exclusive", int64_t{1});
  OnnxModel::attr(n, "reverse", int64_t{1});
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  CHECK(ops_of(g.value()) == std::vector<std::string>{"CumSum"});
  // Rows [1, 2, 3] and [4, 5, 6], summed from the right, leaving each element out.
  CHECK(run(g.value(), {{1, 2, 3, 4, 5, 6}}) == std::vector<float>{5, 3, 0, 11, 6, 0});

  OnnxModel runtime_axis(14);
  runtime_axis.input("a", {2, 3}).input("axis", {1}, onnx::TensorProto::INT64);
  runtime_axis.node("CumSum", {"a", "axis"}, {"y"}, "/cumsum");
  runtime_axis.output("y");
  auto refused = import_model(runtime_axis);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("/cumsum") && Catch::Contains("axis"));
}

TEST_CASE("ONNX Einsum: a batched matmul is one MatMul", "[onnx][einsum]") {
  auto g = import_model(einsum_model("bij, bjk -> bik", {{2, 2, 2}, {2, 2, 2}}));
  REQUIRE(g.is_ok());
  CHECK(ops_of(g.value()) == std::vector<std::string>{"MatMul"});
  // Batch 0: [[1, 2], [3, 4]] @ I; batch 1: [[1, 0], [0, 1]] @ [[5, 6], [7, 8]].
  CHECK(run(g.value(), {{1, 2, 3, 4, 1, 0, 0, 1}, {1, 0, 0, 1, 5, 6, 7, 8}}) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("ONNX Einsum: transposes, sums, inner and outer products", "[onnx][einsum]") {
  const std::vector<float> m23 = {1, 2, 3, 4, 5, 6};  // [[1, 2, 3], [4, 5, 6]]
  CHECK(einsum("ij->ji", {{2, 3}}, {m23}) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(einsum("ij->", {{2, 3}}, {m23}) == std::vector<float>{21});
  CHECK(einsum("ij->j", {{2, 3}}, {m23}) == std::vector<float>{5, 7, 9});
  CHECK(einsum("i,i", {{3}, {3}}, {{1, 2, 3}, {4, 5, 6}}) == std::vector<float>{32});
  CHECK(einsum("i,j->ij", {{2}, {3}}, {{1, 2}, {3, 4, 5}}) == std::vector<float>{3, 4, 5, 6, 8, 10});
  // Implicit output: the labels used once, alphabetically: "ji,jk" -> "ik" = a^T b.
  CHECK(einsum("ji,jk", {{2, 3}, {2, 1}}, {m23, {1, 1}}) == std::vector<float>{5, 7, 9});
  // Three operands fold from the left: (a b) c with a 1x2, b 2x2, c 2x1.
  CHECK(einsum("ij,jk,kl->il", {{1, 2}, {2, 2}, {2, 1}}, {{1, 2}, {1, 2, 3, 4}, {1, -1}}) == std::vector<float>{-3});
  // A label only one operand has, summed before the product: sum_j a[i, j] * sum_k b[k].
  CHECK(einsum("ij,k->i", {{2, 3}, {2}}, {m23, {1, 2}}) == std::vector<float>{18, 45});
}

TEST_CASE("ONNX Einsum: diagonals, traces and ellipses", "[onnx][einsum]") {
  const std::vector<float> m33 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(einsum("ii->i", {{3, 3}}, {m33}) == std::vector<float>{1, 5, 9});
  CHECK(einsum("ii", {{3, 3}}, {m33}) == std::vector<float>{15});
  Shape shape;
  // ONNX's test_einsum_batch_diagonal form: "...ii ->...i" on [2, 2, 2].
  CHECK(einsum("...ii ->...i", {{2, 2, 2}}, {{1, 2, 3, 4, 5, 6, 7, 8}}, &shape) == std::vector<float>{1, 4, 5, 8});
  CHECK(shape == Shape{2, 2});
  CHECK(einsum("...ij,...jk", {{2, 1, 2}, {2, 2, 1}}, {{1, 2, 3, 4}, {1, 1, 1, -1}}, &shape) == std::vector<float>{3, -1});
  CHECK(shape == Shape{2, 1, 1});
}

TEST_CASE("ONNX Einsum refuses what it does not lower, naming the equation", "[onnx][einsum]") {
  auto broadcast = import_model(einsum_model("ij,ij->ij", {{1, 3}, {2, 3}}));
  REQUIRE_FALSE(broadcast.is_ok());
  CHECK_THAT(broadcast.status().message(), Catch::Contains("'ij,ij->ij'") && Catch::Contains("broadcasting"));
  OnnxModel ints(12);
  ints.input("a", {2}, onnx::TensorProto::INT64).input("b", {2}, onnx::TensorProto::INT64);
  auto& n = ints.node("Einsum", {"a", "b"}, {"y"}, "/einsum");
  OnnxModel::attr(n, "equation", std::string("i,i"));
  ints.output("y");
  auto refused = import_model(ints);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("'i,i'") && Catch::Contains("i64"));
  auto bad = import_model(einsum_model("ij,jk->ix", {{2, 2}, {2, 2}}));
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'ij,jk->ix'") && Catch::Contains("'x'"));
}
