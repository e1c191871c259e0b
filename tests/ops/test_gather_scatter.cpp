// gather_scatter family: GatherElements and ScatterElements (every reduction) against ONNX's
// operator examples and hand-computed cases, and their errors.
#include <catch2/catch.hpp>

#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("GatherElements takes one element per index (ONNX's examples)", "[ops][gather_scatter]") {
  auto axis1 = run_op("GatherElements", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({2, 2}, {0, 0, 1, 0})},
                      {{"axis", int64_t{1}}});
  REQUIRE(axis1.is_ok());
  CHECK(axis1.value()[0].f32() == std::vector<float>{1, 1, 4, 3});

  // Fewer rows of indices than data, negative indices counting from the end, i32 indices.
  auto axis0 = run_op("GatherElements",
                      {HostTensor::i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), HostTensor::i32({2, 3}, {-1, -2, 0, 2, 0, 0})},
                      {{"axis", int64_t{0}}});
  REQUIRE(axis0.is_ok());
  CHECK(axis0.value()[0].shape == Shape{2, 3});
  CHECK(axis0.value()[0].values<int64_t>() == std::vector<int64_t>{7, 5, 3, 7, 2, 3});
}

TEST_CASE("ScatterElements writes, or reduces, at the indices", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::f32({1, 5}, {1, 2, 3, 4, 5});
  const HostTensor indices = HostTensor::i64({1, 2}, {1, -2});  // -2 is column 3
  const HostTensor updates = HostTensor::f32({1, 2}, {1.1f, 2.1f});
  auto none = run_op("ScatterElements", {data, indices, updates}, {{"axis", int64_t{1}}});
  REQUIRE(none.is_ok());
  CHECK(none.value()[0].f32() == std::vector<float>{1, 1.1f, 3, 2.1f, 5});

  // Repeated index 1: the reductions fold both updates into the value there.
  const HostTensor twice = HostTensor::i64({1, 2}, {1, 1});
  const std::vector<std::pair<const char*, float>> cases = {
      {"add", 2 + 1.1f + 2.1f}, {"mul", 2 * 1.1f * 2.1f}, {"max", 2.1f}, {"min", 1.1f}};
  for (const auto& [reduction, expected] : cases) {
    DYNAMIC_SECTION("reduction " << reduction) {
      auto out = run_op("ScatterElements", {data, twice, updates},
                        {{"axis", int64_t{1}}, {"reduction", std::string(reduction)}});
      REQUIRE(out.is_ok());
      CHECK(out.value()[0].f32() == std::vector<float>{1, expected, 3, 4, 5});
    }
  }
}

TEST_CASE("ScatterElements along axis 0 of int data (ONNX's example)", "[ops][gather_scatter]") {
  auto out = run_op("ScatterElements",
                    {HostTensor::i64({3, 3}, std::vector<int64_t>(9, 0)), HostTensor::i64({2, 3}, {1, 0, 2, 0, 2, 1}),
                     HostTensor::i64({2, 3}, {10, 11, 12, 20, 21, 22})},
                    {});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int64_t>() == std::vector<int64_t>{20, 11, 0, 10, 0, 22, 0, 21, 12});
}

TEST_CASE("gather_scatter shape inference and errors", "[ops][gather_scatter][errors]") {
  auto shape = infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 6}}}, {{"axis", int64_t{1}}});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{2, 6});
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {4}}}, {}).is_ok());          // rank
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 5}}}, {}).is_ok());       // 5 > 4
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), f32({2, 4})}, {}).is_ok());                           // float indices
  CHECK_FALSE(infer("GatherElements", {f32({3, 4}), TensorType{DType::kI64, {2, 4}}}, {{"axis", int64_t{2}}}).is_ok());
  const TensorType idx{DType::kI64, {2, 4}};
  CHECK_FALSE(infer("ScatterElements", {f32({3, 4}), idx, f32({2, 3})}, {}).is_ok());  // updates != indices
  auto bad = infer("ScatterElements", {f32({3, 4}), idx, f32({2, 4})}, {{"reduction", std::string("mean")}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("reduction") != std::string::npos);
  CHECK_FALSE(infer("ScatterElements", {TensorType{DType::kU8, {3, 4}}, idx, TensorType{DType::kU8, {2, 4}}},
                    {{"reduction", std::string("add")}})
                  .is_ok());

  auto out_of_range = run_op("GatherElements", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({1, 2}, {0, 2})});
  REQUIRE_FALSE(out_of_range.is_ok());
  CHECK(out_of_range.status().message().find("index 2") != std::string::npos);
}

TEST_CASE("GatherND takes the slices index tuples address (ONNX's examples)", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto rows = run_op("GatherND", {data, HostTensor::i64({2, 1, 2}, {0, 1, 1, 0})});
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].shape == Shape{2, 1, 2});
  CHECK(rows.value()[0].values<int32_t>() == std::vector<int32_t>{2, 3, 4, 5});
  // batch_dims 1: batch b reads data[b][indices[b]] (-1 counts from the end).
  auto batched = run_op("GatherND", {data, HostTensor::i64({2, 1}, {1, -2})}, {{"batch_dims", int64_t{1}}});
  REQUIRE(batched.is_ok());
  CHECK(batched.value()[0].shape == Shape{2, 2});
  CHECK(batched.value()[0].values<int32_t>() == std::vector<int32_t>{2, 3, 4, 5});
}

TEST_CASE("ScatterND writes or reduces whole slices (ONNX's examples)", "[ops][gather_scatter]") {
  const HostTensor data = HostTensor::f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor indices = HostTensor::i64({4, 1}, {4, 3, 1, 7});
  const HostTensor updates = HostTensor::f32({4}, {9, 10, 11, 12});
  auto none = run_op("ScatterND", {data, indices, updates});
  REQUIRE(none.is_ok());
  CHECK(none.value()[0].f32() == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});
  auto mul = run_op("ScatterND", {data, HostTensor::i64({2, 1}, {1, 1}), HostTensor::f32({2}, {2, 3})},
                    {{"reduction", std::string("mul")}});
  REQUIRE(mul.is_ok());
  CHECK(mul.value()[0].f32() == std::vector<float>{1, 12, 3, 4, 5, 6, 7, 8});
  // A row slice of a matrix.
  auto rows = run_op("ScatterND", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::i64({1, 1}, {1}),
                                   HostTensor::f32({1, 2}, {7, 8})});
  REQUIRE(rows.is_ok());
  CHECK(rows.value()[0].f32() == std::vector<float>{1, 2, 7, 8});
  CHECK_FALSE(infer("ScatterND", {f32({2, 2}), TensorType{DType::kI64, {1, 1}}, f32({2})}, {}).is_ok());
  CHECK_FALSE(infer("GatherND", {f32({2, 2}), TensorType{DType::kI64, {1, 3}}}, {}).is_ok());
}
