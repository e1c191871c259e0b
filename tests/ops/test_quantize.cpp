// quantize family: what ONNX's node tests (which check the uint8 examples of ONNX's operator
// documentation) leave out — int8, ties rounding to even, saturation, per-axis int8, batched and
// per-row / per-column zero points, an all-zero DynamicQuantizeLinear — with expected values worked
// out by hand from ONNX's definitions, and the errors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor u8(Shape shape, const std::vector<uint8_t>& v) { return HostTensor::make(DType::kU8, std::move(shape), v); }
HostTensor i8(Shape shape, const std::vector<int8_t>& v) { return HostTensor::make(DType::kI8, std::move(shape), v); }

}  // namespace

TEST_CASE("QuantizeLinear to int8 rounds ties to even and saturates", "[ops][quantize]") {
  // x / 2 = 0, 0.5, 1.5, 2.5, -2.5, 500, -500 -> 0, 0, 2, 2, -2 (ties to even), then + (-1), saturated.
  auto out = run_op("QuantizeLinear", {HostTensor::f32({7}, {0, 1, 3, 5, -5, 1000, -1000}), HostTensor::f32({}, {2}),
                                       i8({}, {-1})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].dtype == DType::kI8);
  CHECK(out.value()[0].values<int8_t>() == std::vector<int8_t>{-1, -1, 1, 1, -3, 127, -128});
}

TEST_CASE("DequantizeLinear per axis on int8", "[ops][quantize]") {
  // [2, 3] along axis 1: scales 1, 0.5, 4 and zero points 0, -2, 3.
  auto out = run_op("DequantizeLinear", {i8({2, 3}, {-128, 0, 127, 5, -2, 3}), HostTensor::f32({3}, {1, 0.5f, 4}),
                                         i8({3}, {0, -2, 3})},
                    Attrs{{"axis", int64_t{1}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{-128, 1, 496, 5, 0, 0});
}

TEST_CASE("DynamicQuantizeLinear of zeros has scale 0 and zero point 0", "[ops][quantize]") {
  auto out = run_op("DynamicQuantizeLinear", {HostTensor::f32({3}, {0, 0, 0})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<uint8_t>() == std::vector<uint8_t>{0, 0, 0});
  CHECK(out.value()[1].f32() == std::vector<float>{0});
  CHECK(out.value()[2].values<uint8_t>() == std::vector<uint8_t>{0});
}

TEST_CASE("MatMulInteger: int8 by uint8, batch broadcast, per-row and per-column zero points", "[ops][quantize]") {
  // A [2, 2, 2] int8 with row zero points (1, -1); B [2, 2] uint8 with column zero points (2, 0),
  // broadcast over A's batch.
  const HostTensor a = i8({2, 2, 2}, {1, 2, 3, 4, -1, 0, 5, -5});
  const HostTensor b = u8({2, 2}, {3, 1, 4, 2});
  auto out = run_op("MatMulInteger", {a, b, i8({2}, {1, -1}), u8({2}, {2, 0})});
  REQUIRE(out.is_ok());
  // B - zp = [[1, 1], [2, 2]]; batch 0: (A - zp) = [[0, 1], [4, 5]]; batch 1: [[-2, -1], [6, -4]].
  CHECK(out.value()[0].values<int32_t>() == std::vector<int32_t>{2, 2, 14, 14, -4, -4, -2, -2});
}

TEST_CASE("QLinearMatMul to int8 with a per-column b scale", "[ops][quantize]") {
  // (a - 0) @ (b - 0) = [[4, -6]]; times 0.5 * (1, 2) / 1 -> 2, -6; plus -1.
  auto out = run_op("QLinearMatMul", {u8({1, 2}, {2, 0}), HostTensor::f32({}, {0.5f}), u8({}, {0}),
                                      i8({2, 2}, {2, -3, 7, 7}), HostTensor::f32({2}, {1, 2}), i8({}, {0}),
                                      HostTensor::f32({}, {1}), i8({}, {-1})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int8_t>() == std::vector<int8_t>{1, -7});
}

TEST_CASE("quantize ops refuse wrong dtypes and shapes naming them", "[ops][quantize][errors]") {
  auto float_zp = run_op("QuantizeLinear", {HostTensor::f32({2}, {1, 2}), HostTensor::f32({}, {1}), HostTensor::f32({}, {0})});
  REQUIRE_FALSE(float_zp.is_ok());
  CHECK_THAT(float_zp.status().message(), Catch::Contains("zero point must be u8 or i8"));
  auto per_axis = run_op("DequantizeLinear", {u8({2, 3}, {0, 0, 0, 0, 0, 0}), HostTensor::f32({2}, {1, 1})},
                         Attrs{{"axis", int64_t{1}}});
  REQUIRE_FALSE(per_axis.is_ok());
  CHECK_THAT(per_axis.status().message(), Catch::Contains("one value per element of axis 1"));
  auto inner = run_op("MatMulInteger", {u8({2, 3}, {0, 0, 0, 0, 0, 0}), u8({2, 2}, {0, 0, 0, 0})});
  REQUIRE_FALSE(inner.is_ok());
  CHECK_THAT(inner.status().message(), Catch::Contains("inner dims differ"));
}
