// cumulative family: CumSum against the values ONNX's operator documentation gives (by hand: running
// sums of small integers), on every dtype it registers; its errors; its gradient against finite
// differences; and the cpu kernel against ref on random shapes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

Attrs cumsum_attrs(int64_t axis, int64_t exclusive, int64_t reverse) {
  return Attrs{{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}};
}

template <typename T>
std::vector<T> run_cumsum(DType dtype, Shape shape, const std::vector<T>& x, const Attrs& attrs, const std::string& backend = "ref") {
  auto out = run_op("CumSum", {HostTensor::make(dtype, std::move(shape), x)}, attrs, {}, backend);
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].dtype == dtype);
  return out.value()[0].template values<T>();
}

OpCase cumsum_case(const Shape& shape, const Attrs& attrs, uint32_t seed) {
  OpCase c;
  c.op = "CumSum";
  c.inputs = {input(shape, seed)};
  c.attrs = attrs;
  return c;
}

// ONNX's examples: [1, 2, 3, 4, 5] in the four modes.
template <typename T>
void check_modes(DType dtype) {
  const std::vector<T> x = {1, 2, 3, 4, 5};
  CHECK(run_cumsum<T>(dtype, {5}, x, cumsum_attrs(0, 0, 0)) == std::vector<T>{1, 3, 6, 10, 15});
  CHECK(run_cumsum<T>(dtype, {5}, x, cumsum_attrs(0, 1, 0)) == std::vector<T>{0, 1, 3, 6, 10});
  CHECK(run_cumsum<T>(dtype, {5}, x, cumsum_attrs(0, 0, 1)) == std::vector<T>{15, 14, 12, 9, 5});
  CHECK(run_cumsum<T>(dtype, {5}, x, cumsum_attrs(0, 1, 1)) == std::vector<T>{14, 12, 9, 5, 0});
}

}  // namespace

TEST_CASE("CumSum runs forward, exclusive and reversed (ONNX's 1-D examples) on every dtype", "[ops][cumulative]") {
  check_modes<float>(DType::kF32);
  check_modes<double>(DType::kF64);
  check_modes<int32_t>(DType::kI32);
  check_modes<int64_t>(DType::kI64);
  check_modes<uint32_t>(DType::kU32);
  check_modes<uint64_t>(DType::kU64);
}

TEST_CASE("CumSum sums along the axis it is given (ONNX's 2-D examples)", "[ops][cumulative]") {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6};  // [2, 3]
  CHECK(run_cumsum<double>(DType::kF64, {2, 3}, x, cumsum_attrs(0, 0, 0)) == std::vector<double>{1, 2, 3, 5, 7, 9});
  CHECK(run_cumsum<double>(DType::kF64, {2, 3}, x, cumsum_attrs(1, 0, 0)) == std::vector<double>{1, 3, 6, 4, 9, 15});
  CHECK(run_cumsum<double>(DType::kF64, {2, 3}, x, cumsum_attrs(-1, 0, 0)) == std::vector<double>{1, 3, 6, 4, 9, 15});
  // The middle axis of [2, 2, 2], reversed and exclusive: each pair (a, b) along it becomes (b, 0).
  const std::vector<float> y = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(run_cumsum<float>(DType::kF32, {2, 2, 2}, y, cumsum_attrs(1, 1, 1)) == std::vector<float>{3, 4, 0, 0, 7, 8, 0, 0});
}

TEST_CASE("CumSum on integers wraps like numpy's cumsum", "[ops][cumulative]") {
  const std::vector<int32_t> x = {2147483647, 1};
  CHECK(run_cumsum<int32_t>(DType::kI32, {2}, x, cumsum_attrs(0, 0, 0)) == std::vector<int32_t>{2147483647, -2147483647 - 1});
}

TEST_CASE("CumSum refuses dtypes it does not sum and axes out of range", "[ops][cumulative]") {
  auto u8 = run_op("CumSum", {HostTensor::make<uint8_t>(DType::kU8, {2}, {1, 2})}, cumsum_attrs(0, 0, 0));
  REQUIRE_FALSE(u8.is_ok());
  CHECK_THAT(u8.status().message(), Catch::Contains("u8"));
  auto axis = run_op("CumSum", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, cumsum_attrs(2, 0, 0));
  REQUIRE_FALSE(axis.is_ok());
  CHECK_THAT(axis.status().message(), Catch::Contains("axis"));
  auto flag = run_op("CumSum", {HostTensor::f32({2}, {1, 2})}, cumsum_attrs(0, 2, 0));
  REQUIRE_FALSE(flag.is_ok());
  CHECK_THAT(flag.status().message(), Catch::Contains("exclusive"));
}

TEST_CASE("CumSum gradients match finite differences in every mode", "[ops][grad][cumulative][fd]") {
  const HostTensor x = HostTensor::f32({2, 3, 4}, random_floats(24, 11));
  for (int64_t axis : {0, 1, 2}) {
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        DYNAMIC_SECTION("axis " << axis << " exclusive " << exclusive << " reverse " << reverse) {
          CHECK(check_op_gradients("CumSum", {x}, cumsum_attrs(axis, exclusive, reverse), {true}));
        }
      }
    }
  }
}

TEST_CASE("cpu CumSum matches ref on random shapes, axes and modes", "[ops][cpu][cumulative]") {
  std::mt19937 gen(5);
  uint32_t seed = 100;
  for (int rank = 1; rank <= 4; ++rank) {
    const Shape shape = random_shape(gen, rank, 1, 7);
    for (int64_t axis = 0; axis < rank; ++axis) {
      for (int64_t mode = 0; mode < 4; ++mode) {
        check_against_ref("cpu", cumsum_case(shape, cumsum_attrs(axis, mode & 1, mode >> 1), ++seed));
      }
    }
  }
  check_against_ref("cpu", cumsum_case({3, 300, 17}, cumsum_attrs(1, 0, 1), ++seed));
}
