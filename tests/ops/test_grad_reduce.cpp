// Finite-difference checks of the reduce family's gradient rules (Sum, Mean, Max, Min, Prod,
// SumSquare, L1, L2, LogSum, LogSumExp), Prod's also on groups holding zeros.
#include <algorithm>
#include <numeric>

#include <catch2/catch.hpp>

#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Distinct values 0.1 apart in random order: the maximum of any group is unique and no runner-up
// lies within a finite-difference step of it.
HostTensor distinct(Shape shape, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(i) - 1.0f;
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return HostTensor::f32(shape, v);
}

Attrs reduce_attrs(std::vector<int64_t> axes, int64_t keepdims) {
  Attrs a{{"keepdims", keepdims}};
  if (!axes.empty()) a.set("axes", axes);
  return a;
}

struct Case {
  std::vector<int64_t> axes;  // empty: every axis
  int64_t keepdims;
};
const std::vector<Case> kCases = {{{}, 1}, {{}, 0}, {{0}, 1}, {{1}, 0}, {{-1}, 1}, {{0, 2}, 0}, {{1, 2}, 1}};

}  // namespace

TEST_CASE("ReduceSum, ReduceMean and ReduceMax gradients match finite differences", "[grad][reduce]") {
  const Shape shape{2, 3, 4};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
    for (size_t k = 0; k < kCases.size(); ++k) {
      INFO(op << " case " << k << " keepdims " << kCases[k].keepdims);
      CHECK(check_op_gradients(op, {distinct(shape, 1 + static_cast<uint32_t>(k))}, reduce_attrs(kCases[k].axes, kCases[k].keepdims),
                               {true}));
    }
  }
}

TEST_CASE("the other reductions' gradients match finite differences", "[grad][reduce]") {
  const Shape shape{2, 3, 4};
  // distinct() holds one exact 0: L1's kink, where AbsGrad and the central difference both give 0.
  for (const char* op : {"ReduceMin", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"}) {
    for (size_t k = 0; k < kCases.size(); ++k) {
      INFO(op << " case " << k << " keepdims " << kCases[k].keepdims);
      CHECK(check_op_gradients(op, {distinct(shape, 11 + static_cast<uint32_t>(k))}, reduce_attrs(kCases[k].axes, kCases[k].keepdims),
                               {true}));
    }
  }
  // LogSum needs positive sums, Prod factors near 1 (the product of 24 values stays near 1).
  for (size_t k = 0; k < kCases.size(); ++k) {
    const auto positive = random_floats(24, 31 + static_cast<uint32_t>(k), 0.5f, 1.5f);
    INFO("case " << k << " keepdims " << kCases[k].keepdims);
    for (const char* op : {"ReduceLogSum", "ReduceProd"}) {
      INFO(op);
      CHECK(check_op_gradients(op, {HostTensor::f32(shape, positive)}, reduce_attrs(kCases[k].axes, kCases[k].keepdims), {true}));
    }
  }
}

TEST_CASE("ReduceProd's gradient is right on groups with one and with two zeros", "[grad][reduce]") {
  // Rows: no zero, one zero, two zeros. The product is linear in each element, so central
  // differences are exact even at 0, where dividing by x would not be.
  const HostTensor x = HostTensor::f32({3, 4}, {1.5f, -0.5f, 2.0f, 0.75f, 1.25f, 0.0f, -2.0f, 0.5f, 0.0f, 3.0f, 0.0f, 1.5f});
  for (int64_t keepdims : {0, 1}) CHECK(check_op_gradients("ReduceProd", {x}, reduce_attrs({1}, keepdims), {true}));
  CHECK(check_op_gradients("ReduceProd", {x}, reduce_attrs({}, 0), {true}));
}

TEST_CASE("ReduceMax splits the gradient evenly among tied maxima", "[grad][reduce]") {
  // Ties make finite differences one-sided, so check against the hand-derived rule instead:
  // L = sum(r * max(x)) over rows; each of the t tied maxima of a row gets r / t.
  Graph g;
  const TensorId x = g.add_parameter_f32("x", {2, 3}, {1, 5, 5, 2, 2, 2});
  auto m = g.add_node("ReduceMax", {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  REQUIRE(m.is_ok());
  const TensorId r = g.add_constant("r", DType::kF32, {2}, std::vector<uint8_t>(8));
  {
    std::vector<float> rv{3.0f, 6.0f};
    auto bytes = std::make_shared<std::vector<uint8_t>>(8);
    std::memcpy(bytes->data(), rv.data(), 8);
    g.mutable_tensor(r).data = bytes;
  }
  auto prod = g.add_node("Mul", {m.value()[0], r});
  REQUIRE(prod.is_ok());
  auto loss = g.add_node("ReduceSum", {prod.value()[0]}, Attrs{{"keepdims", int64_t{0}}});
  REQUIRE(loss.is_ok());
  REQUIRE(g.mark_output(loss.value()[0], "loss").is_ok());
  Recipe recipe;
  recipe.loss.type = "output";
  recipe.optimizer.lr = 0.0;
  CompileOptions options;
  options.expose_gradients = true;
  auto blob = compile(g, &recipe, options);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->train_step().is_ok());
  auto grad = engine->output<float>("x.grad");
  REQUIRE(grad.is_ok());
  CHECK(grad.value() == std::vector<float>{0.0f, 1.5f, 1.5f, 2.0f, 2.0f, 2.0f});
}
