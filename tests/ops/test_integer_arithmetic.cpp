// Add, Sub, Mul and Div on i8, u8, i32 and i64 (ref kernels): results written out by hand with
// numpy's semantics — wrap-around on overflow, division truncating toward zero (ONNX's
// test_div_uint8 data and onnxruntime) — broadcasting, and division by zero refused by name.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

template <typename T>
std::vector<T> run(const std::string& op, DType dt, const std::vector<T>& a, const std::vector<T>& b, Shape sb = {}) {
  const Shape sa{static_cast<int64_t>(a.size())};
  if (sb.empty()) sb = sa;
  auto out = run_op(op, {HostTensor::make(dt, sa, a), HostTensor::make(dt, sb, b)});
  INFO(op << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].dtype == dt);
  return out.value()[0].template values<T>();
}

}  // namespace

TEST_CASE("u8 arithmetic wraps around and divides truncating", "[ops][elementwise][integer]") {
  const std::vector<uint8_t> a{200, 3, 16, 7, 255}, b{100, 5, 17, 2, 255};
  CHECK(run<uint8_t>("Add", DType::kU8, a, b) == std::vector<uint8_t>{44, 8, 33, 9, 254});
  CHECK(run<uint8_t>("Sub", DType::kU8, a, b) == std::vector<uint8_t>{100, 254, 255, 5, 0});
  CHECK(run<uint8_t>("Mul", DType::kU8, a, b) == std::vector<uint8_t>{32, 15, 16, 14, 1});
  CHECK(run<uint8_t>("Div", DType::kU8, a, b) == std::vector<uint8_t>{2, 0, 0, 3, 1});
}

TEST_CASE("i8 arithmetic wraps around and divides toward zero", "[ops][elementwise][integer]") {
  const std::vector<int8_t> a{127, -128, -7, 7, -128}, b{1, 1, 2, -2, -1};
  CHECK(run<int8_t>("Add", DType::kI8, a, b) == std::vector<int8_t>{-128, -127, -5, 5, 127});
  CHECK(run<int8_t>("Sub", DType::kI8, a, b) == std::vector<int8_t>{126, 127, -9, 9, -127});
  CHECK(run<int8_t>("Mul", DType::kI8, a, b) == std::vector<int8_t>{127, -128, -14, -14, -128});
  CHECK(run<int8_t>("Div", DType::kI8, a, b) == std::vector<int8_t>{127, -128, -3, -3, -128});
}

TEST_CASE("i32 and i64 arithmetic wraps around without undefined behaviour", "[ops][elementwise][integer]") {
  const int32_t max32 = std::numeric_limits<int32_t>::max(), min32 = std::numeric_limits<int32_t>::min();
  CHECK(run<int32_t>("Add", DType::kI32, {max32, -5}, {1, 3}) == std::vector<int32_t>{min32, -2});
  CHECK(run<int32_t>("Mul", DType::kI32, {65536, -6}, {65536, 7}) == std::vector<int32_t>{0, -42});
  CHECK(run<int32_t>("Div", DType::kI32, {min32, -9}, {-1, 4}) == std::vector<int32_t>{min32, -2});
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  CHECK(run<int64_t>("Sub", DType::kI64, {min64, 10}, {1, 20}) == std::vector<int64_t>{std::numeric_limits<int64_t>::max(), -10});
  CHECK(run<int64_t>("Mul", DType::kI64, {int64_t{1} << 62, -3}, {4, 5}) == std::vector<int64_t>{0, -15});
}

TEST_CASE("integer arithmetic broadcasts a scalar and a row", "[ops][elementwise][integer]") {
  CHECK(run<uint8_t>("Sub", DType::kU8, {10, 20, 30}, {15}, {1}) == std::vector<uint8_t>{251, 5, 15});
  auto out = run_op("Add", {HostTensor::make<int8_t>(DType::kI8, {2, 3}, {1, 2, 3, 4, 5, 6}),
                            HostTensor::make<int8_t>(DType::kI8, {3}, {10, 20, 30})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int8_t>() == std::vector<int8_t>{11, 22, 33, 14, 25, 36});
}

TEST_CASE("integer division by zero is refused, naming the element", "[ops][elementwise][integer]") {
  auto out = run_op("Div", {HostTensor::make<uint8_t>(DType::kU8, {3}, {1, 2, 3}), HostTensor::make<uint8_t>(DType::kU8, {3}, {1, 0, 1})});
  REQUIRE_FALSE(out.is_ok());
  CHECK(out.status().message().find("integer division by zero: element 1 of the divisor is 0") != std::string::npos);
}
