// ReduceSum, ReduceMean, ReduceMax: shape inference (axes, negative axes, keepdims, errors naming
// the node) and the reference kernels against naive double loops on random shapes and axis sets.
#include <catch2/catch.hpp>
#include <limits>

#include "support/expect_close.hpp"
#include "support/backend_under_test.hpp"

using namespace pock;
using namespace pock::test;

namespace {

Result<Shape> infer(const std::string& op, const Shape& shape, const Attrs& attrs) {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, shape);
  auto outs = g.add_node(op, {x}, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  return g.tensor((*outs)[0]).shape;
}

Attrs reduce_attrs(std::vector<int64_t> axes, int64_t keepdims) { return {{"axes", std::move(axes)}, {"keepdims", keepdims}}; }

// Naive reduction: every input element whose kept indices match the output's contributes.
std::vector<double> naive_reduce(const std::string& op, const std::vector<float>& x, const Shape& shape,
                                 const std::vector<bool>& reduced) {
  Shape out_dims;  // keepdims form: same rank, reduced dims 1
  for (size_t d = 0; d < shape.size(); ++d) out_dims.push_back(reduced[d] ? 1 : shape[d]);
  std::vector<double> y;
  for (int64_t o = 0; o < numel(out_dims); ++o) {
    const auto oi = unravel(o, out_dims);
    double sum = 0.0, max = -std::numeric_limits<double>::infinity();
    int64_t count = 0;
    for (int64_t i = 0; i < numel(shape); ++i) {
      const auto ii = unravel(i, shape);
      bool match = true;
      for (size_t d = 0; d < shape.size(); ++d) match = match && (reduced[d] || ii[d] == oi[d]);
      if (!match) continue;
      sum += x[static_cast<size_t>(i)];
      max = std::max(max, static_cast<double>(x[static_cast<size_t>(i)]));
      ++count;
    }
    y.push_back(op == "ReduceSum" ? sum : op == "ReduceMean" ? sum / static_cast<double>(count) : max);
  }
  return y;
}

}  // namespace

TEST_CASE("reduce shape inference", "[ops][reduce]") {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
    INFO(op);
    CHECK(infer(op, {2, 3, 4}, reduce_attrs({1}, 1)).value() == Shape{2, 1, 4});
    CHECK(infer(op, {2, 3, 4}, reduce_attrs({1}, 0)).value() == Shape{2, 4});
    CHECK(infer(op, {2, 3, 4}, reduce_attrs({-1, 0}, 0)).value() == Shape{3});
    CHECK(infer(op, {2, 3, 4}, reduce_attrs({}, 1)).value() == Shape{1, 1, 1});
    CHECK(infer(op, {2, 3, 4}, reduce_attrs({}, 0)).value() == Shape{});
    CHECK(infer(op, {2, 3, 4}, {}).value() == Shape{1, 1, 1});  // defaults: all axes, keepdims=1

    auto range = infer(op, {2, 3}, reduce_attrs({2}, 1));
    REQUIRE_FALSE(range.is_ok());
    CHECK_THAT(range.status().message(), Catch::Contains(std::string(op) + " 'node'") && Catch::Contains("axis 2"));

    auto twice = infer(op, {2, 3}, reduce_attrs({1, -1}, 1));
    REQUIRE_FALSE(twice.is_ok());
    CHECK_THAT(twice.status().message(), Catch::Contains(std::string(op) + " 'node'") && Catch::Contains("twice"));

    auto keep = infer(op, {2, 3}, reduce_attrs({0}, 2));
    REQUIRE_FALSE(keep.is_ok());
    CHECK_THAT(keep.status().message(), Catch::Contains("keepdims"));
  }
  // Sum over nothing is 0; max and mean over nothing are undefined.
  CHECK(infer("ReduceSum", {2, 0}, reduce_attrs({1}, 0)).value() == Shape{2});
  auto empty_max = infer("ReduceMax", {2, 0}, reduce_attrs({1}, 0));
  REQUIRE_FALSE(empty_max.is_ok());
  CHECK_THAT(empty_max.status().message(), Catch::Contains("ReduceMax 'node'") && Catch::Contains("zero elements"));
  CHECK_FALSE(infer("ReduceMean", {0, 3}, reduce_attrs({}, 1)).is_ok());
}

TEST_CASE("reduce hand-computed on a 2x3 matrix", "[ops][reduce]") {
  const HostTensor x = HostTensor::f32({2, 3}, {1, -2, 3, 4, 5, -6});
  auto rows = run_op_under_test("ReduceSum", {x}, reduce_attrs({1}, 0));
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].f32() == std::vector<float>{2, 3});
  auto cols = run_op_under_test("ReduceMean", {x}, reduce_attrs({0}, 1));
  REQUIRE(cols.is_ok());
  CHECK(cols.value()[0].shape == Shape{1, 3});
  CHECK(cols.value()[0].f32() == std::vector<float>{2.5f, 1.5f, -1.5f});
  auto all = run_op_under_test("ReduceMax", {x}, {});
  REQUIRE(all.is_ok());
  CHECK(all.value()[0].f32() == std::vector<float>{5});
  auto neg = run_op_under_test("ReduceMax", {HostTensor::f32({3}, {-3, -1, -2})}, reduce_attrs({0}, 0));
  REQUIRE(neg.is_ok());
  CHECK(neg.value()[0].f32() == std::vector<float>{-1});
}

TEST_CASE("reduce matches naive loops on random shapes and axes", "[ops][reduce]") {
  std::mt19937 gen(99);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
    for (int trial = 0; trial < 10; ++trial) {
      const int rank = 1 + trial % 4;
      const Shape shape = random_shape(gen, rank, 1, 5);
      std::vector<bool> reduced(static_cast<size_t>(rank));
      std::vector<int64_t> axes;
      for (int d = 0; d < rank; ++d) {
        if (gen() % 2) {
          reduced[d] = true;
          axes.push_back(gen() % 2 ? d : d - rank);  // negative axes too
        }
      }
      if (axes.empty()) reduced.assign(static_cast<size_t>(rank), true);  // empty axes = all
      const int64_t keepdims = trial % 2;
      const auto x = random_floats(static_cast<size_t>(numel(shape)), 77 + trial, -10.0f, 10.0f);
      auto out = run_op_under_test(op, {HostTensor::f32(shape, x)}, reduce_attrs(axes, keepdims));
      INFO(op << " " << shape_str(shape) << " axes " << shape_str(axes) << " keepdims " << keepdims);
      REQUIRE(out.is_ok());
      Shape want_shape;
      for (int d = 0; d < rank; ++d) {
        if (!reduced[d]) want_shape.push_back(shape[d]);
        else if (keepdims) want_shape.push_back(1);
      }
      CHECK(out.value()[0].shape == want_shape);
      CHECK(mismatches(out.value()[0].f32(), naive_reduce(op, x, shape, reduced)) == "");
    }
  }
}

TEST_CASE("ReduceMax propagates NaN, ReduceSum of nothing is 0", "[ops][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto max = run_op_under_test("ReduceMax", {HostTensor::f32({2, 2}, {1, nan, 3, 4})}, reduce_attrs({1}, 0));
  REQUIRE(max.is_ok());
  CHECK(std::isnan(max.value()[0].f32()[0]));
  CHECK(max.value()[0].f32()[1] == 4.0f);
  auto sum = run_op_under_test("ReduceSum", {HostTensor::f32({2, 0}, {})}, reduce_attrs({1}, 0));
  REQUIRE(sum.is_ok());
  CHECK(sum.value()[0].f32() == std::vector<float>{0, 0});
}
