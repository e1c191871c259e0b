// The reduce family (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp): shape inference (axes, negative axes,
// keepdims, errors naming the node) and the kernels against naive double loops written from ONNX's
// definitions on random shapes and axis sets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/expect_close.hpp"
#include "support/backend_under_test.hpp"
#include "support/onnx_reduce_reference.hpp"

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

const char* const kAllReductions[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                      "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"};

// Naive reduction: every input element whose kept indices match the output's contributes.
std::vector<double> naive_reduce(const std::string& op, const std::vector<float>& x, const Shape& shape,
                                 const std::vector<bool>& reduced) {
  Shape out_dims;  // keepdims form: same rank, reduced dims 1
  for (size_t d = 0; d < shape.size(); ++d) out_dims.push_back(reduced[d] ? 1 : shape[d]);
  std::vector<double> y;
  for (int64_t o = 0; o < numel(out_dims); ++o) {
    const auto oi = unravel(o, out_dims);
    std::vector<double> group;
    for (int64_t i = 0; i < numel(shape); ++i) {
      const auto ii = unravel(i, shape);
      bool match = true;
      for (size_t d = 0; d < shape.size(); ++d) match = match && (reduced[d] || ii[d] == oi[d]);
      if (!match) continue;
      group.push_back(x[static_cast<size_t>(i)]);
    }
    y.push_back(onnx_reduce_group(op, group));
  }
  return y;
}

}  // namespace

TEST_CASE("reduce shape inference", "[ops][reduce]") {
  for (const char* op : kAllReductions) {
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
  auto empty_min = infer("ReduceMin", {0, 3}, reduce_attrs({0}, 1));
  REQUIRE_FALSE(empty_min.is_ok());
  CHECK_THAT(empty_min.status().message(), Catch::Contains("minimum"));
  for (const char* op : {"ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    CHECK(infer(op, {2, 0}, reduce_attrs({1}, 1)).value() == Shape{2, 1});
  }
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
  for (const char* op : kAllReductions) {
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
      // Positive values keep ReduceLogSum defined; values near 1 keep products of up to 625 factors finite.
      const std::string name(op);
      const bool positive = name == "ReduceLogSum", near_one = name == "ReduceProd";
      const auto x = random_floats(static_cast<size_t>(numel(shape)), 77 + trial, positive || near_one ? 0.5f : -10.0f,
                                   near_one ? 1.5f : 10.0f);
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

TEST_CASE("reductions over zero elements give ONNX's empty values", "[ops][reduce]") {
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor empty = HostTensor::f32({2, 0}, {});
  const std::vector<std::pair<const char*, float>> want = {
      {"ReduceProd", 1.0f}, {"ReduceSumSquare", 0.0f}, {"ReduceL1", 0.0f},
      {"ReduceL2", 0.0f},   {"ReduceLogSum", -inf},    {"ReduceLogSumExp", -inf}};
  for (const auto& [op, value] : want) {
    INFO(op);
    auto out = run_op_under_test(op, {empty}, reduce_attrs({1}, 0));
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].f32() == std::vector<float>{value, value});
  }
}

TEST_CASE("ReduceLogSumExp stays finite where exp overflows, and keeps infinities", "[ops][reduce]") {
  const float inf = std::numeric_limits<float>::infinity();
  // log(e^1000 + e^1000) = 1000 + log 2; exp(1000) alone overflows even a double.
  auto big = run_op_under_test("ReduceLogSumExp", {HostTensor::f32({1, 2}, {1000.0f, 1000.0f})}, reduce_attrs({1}, 0));
  REQUIRE(big.is_ok());
  CHECK(big.value()[0].f32()[0] == Approx(1000.0 + std::log(2.0)));
  auto infs = run_op_under_test("ReduceLogSumExp", {HostTensor::f32({2, 2}, {-inf, -inf, inf, 1.0f})}, reduce_attrs({1}, 0));
  REQUIRE(infs.is_ok());
  CHECK(infs.value()[0].f32() == std::vector<float>{-inf, inf});
}

TEST_CASE("ReduceMin picks the smallest and propagates NaN", "[ops][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto min = run_op_under_test("ReduceMin", {HostTensor::f32({2, 3}, {4, -2, 7, nan, 1, 0})}, reduce_attrs({1}, 1));
  REQUIRE(min.is_ok());
  CHECK(min.value()[0].shape == Shape{2, 1});
  CHECK(min.value()[0].f32()[0] == -2.0f);
  CHECK(std::isnan(min.value()[0].f32()[1]));
}

namespace {

Attrs arg_attrs(int64_t axis, int64_t keepdims, int64_t last) {
  return {{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}};
}

// numpy's argmax/argmin along one axis of a row-major tensor, written out: the first extremum,
// or the last one when `last` (ONNX's select_last_index).
std::vector<int64_t> naive_arg(bool max, const std::vector<float>& x, const Shape& shape, int axis, bool last) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[static_cast<size_t>(axis)];
  std::vector<int64_t> y;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<float> row;
      for (int64_t k = 0; k < n; ++k) row.push_back(x[static_cast<size_t>((o * n + k) * inner + i)]);
      const float best = max ? *std::max_element(row.begin(), row.end()) : *std::min_element(row.begin(), row.end());
      int64_t at = -1;
      for (int64_t k = 0; k < n; ++k) {
        if (row[static_cast<size_t>(k)] == best && (at < 0 || last)) at = k;
      }
      y.push_back(at);
    }
  }
  return y;
}

}  // namespace

TEST_CASE("ArgMax and ArgMin shape inference", "[ops][reduce]") {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    INFO(op);
    Graph g;
    const TensorId x = g.add_input("x", DType::kF32, {2, 3, 4});
    auto kept = g.add_node(op, {x}, arg_attrs(1, 1, 0), "node");
    REQUIRE(kept.is_ok());
    CHECK(g.tensor(kept.value()[0]).shape == Shape{2, 1, 4});
    CHECK(g.tensor(kept.value()[0]).dtype == DType::kI64);
    auto dropped = g.add_node(op, {x}, arg_attrs(-1, 0, 1), "node2");
    REQUIRE(dropped.is_ok());
    CHECK(g.tensor(dropped.value()[0]).shape == Shape{2, 3});
    auto defaults = g.add_node(op, {x}, {}, "node3");  // axis 0, keepdims 1
    REQUIRE(defaults.is_ok());
    CHECK(g.tensor(defaults.value()[0]).shape == Shape{1, 3, 4});

    auto range = g.add_node(op, {x}, arg_attrs(3, 1, 0), "bad_axis");
    REQUIRE_FALSE(range.is_ok());
    CHECK_THAT(range.status().message(), Catch::Contains(std::string(op) + " 'bad_axis'"));
    CHECK_FALSE(g.add_node(op, {x}, arg_attrs(0, 1, 2), "bad_last").is_ok());
    const TensorId empty = g.add_input("e", DType::kF32, {2, 0});
    auto none = g.add_node(op, {empty}, arg_attrs(1, 1, 0), "empty");
    REQUIRE_FALSE(none.is_ok());
    CHECK_THAT(none.status().message(), Catch::Contains("empty"));
  }
}

TEST_CASE("ArgMax and ArgMin: ties, select_last_index and NaN", "[ops][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostTensor x = HostTensor::f32({3, 4}, {1, 5, 5, 2, 0, -1, 3, -1, 2, nan, 7, nan});
  auto first_max = run_op_under_test("ArgMax", {x}, arg_attrs(1, 0, 0));
  REQUIRE(first_max.is_ok());
  CHECK(first_max.value()[0].dtype == DType::kI64);
  CHECK(first_max.value()[0].values<int64_t>() == std::vector<int64_t>{1, 2, 1});  // NaN wins, as in numpy
  auto last_max = run_op_under_test("ArgMax", {x}, arg_attrs(1, 0, 1));
  REQUIRE(last_max.is_ok());
  CHECK(last_max.value()[0].values<int64_t>() == std::vector<int64_t>{2, 2, 3});
  auto first_min = run_op_under_test("ArgMin", {x}, arg_attrs(1, 1, 0));
  REQUIRE(first_min.is_ok());
  CHECK(first_min.value()[0].shape == Shape{3, 1});
  CHECK(first_min.value()[0].values<int64_t>() == std::vector<int64_t>{0, 1, 1});
  auto last_min = run_op_under_test("ArgMin", {x}, arg_attrs(1, 1, 1));
  REQUIRE(last_min.is_ok());
  CHECK(last_min.value()[0].values<int64_t>() == std::vector<int64_t>{0, 3, 3});
}

TEST_CASE("ArgMax and ArgMin match numpy's definition on random shapes with ties", "[ops][reduce]") {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 12; ++trial) {
    const int rank = 1 + trial % 4;
    const Shape shape = random_shape(gen, rank, 1, 5);
    std::vector<float> x(static_cast<size_t>(numel(shape)));
    for (float& v : x) v = static_cast<float>(gen() % 4);  // few distinct values: many ties
    const int axis = static_cast<int>(gen() % static_cast<uint32_t>(rank));
    for (const bool max : {true, false}) {
      for (const int64_t last : {0, 1}) {
        INFO(shape_str(shape) << " axis " << axis << " max " << max << " last " << last);
        auto out = run_op_under_test(max ? "ArgMax" : "ArgMin", {HostTensor::f32(shape, x)},
                                     arg_attrs(axis - (trial % 2 ? rank : 0), trial % 3 == 0, last));
        REQUIRE(out.is_ok());
        CHECK(out.value()[0].values<int64_t>() == naive_arg(max, x, shape, axis, last != 0));
      }
    }
  }
}
