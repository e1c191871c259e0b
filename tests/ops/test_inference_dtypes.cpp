// The dtypes pock carries for inference only — f64, i16, u16, u32, u64 — through the ops ONNX graphs
// compute in them: Cast both ways, arithmetic (integers wrap, integer division by zero is refused),
// Max / Min / Mod / Pow, the reductions and MatMul on f64. Expected values are worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor cast_to(const HostTensor& x, const char* to) {
  auto out = run_op("Cast", {x}, Attrs{{"to", std::string(to)}});
  REQUIRE(out.is_ok());
  return out.value()[0];
}

template <typename T>
std::vector<T> binary(const char* op, DType dt, const std::vector<T>& a, const std::vector<T>& b) {
  auto out = run_op(op, {HostTensor::make(dt, {static_cast<int64_t>(a.size())}, a),
                         HostTensor::make(dt, {static_cast<int64_t>(b.size())}, b)});
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].dtype == dt);
  return out.value()[0].template values<T>();
}

}  // namespace

TEST_CASE("the new dtypes keep their codes, sizes and names", "[ops][dtypes]") {
  // The codes are stored in blobs and cross the C API: they must never move.
  CHECK(static_cast<int>(DType::kF64) == POCK_F64);
  CHECK(static_cast<int>(DType::kI16) == 9);
  CHECK(static_cast<int>(DType::kU64) == 12);
  CHECK(dtype_size(DType::kF64) == 8);
  CHECK(dtype_size(DType::kI16) == 2);
  CHECK(dtype_size(DType::kU16) == 2);
  CHECK(dtype_size(DType::kU32) == 4);
  CHECK(dtype_size(DType::kU64) == 8);
  for (const char* name : {"f64", "i16", "u16", "u32", "u64"}) {
    auto dt = dtype_from_name(name);
    REQUIRE(dt.is_ok());
    CHECK(std::string(dtype_name(dt.value())) == name);
  }
  CHECK(is_float(DType::kF64));
  CHECK_FALSE(is_trainable_float(DType::kF64));
}

TEST_CASE("Cast to and from f64 keeps every value the narrower side holds", "[ops][dtypes]") {
  const HostTensor x = HostTensor::make<double>(DType::kF64, {4}, {0.1, -2.5, 1e300, 3.0});
  const HostTensor f = cast_to(x, "f32");
  CHECK(f.f32() == std::vector<float>{0.1f, -2.5f, std::numeric_limits<float>::infinity(), 3.0f});
  const HostTensor back = cast_to(f, "f64");
  CHECK(back.values<double>() == std::vector<double>{static_cast<double>(0.1f), -2.5, std::numeric_limits<double>::infinity(), 3.0});
  // f64 -> i32 truncates toward zero.
  CHECK(cast_to(HostTensor::make<double>(DType::kF64, {3}, {-2.7, 2.7, 7.0}), "i32").values<int32_t>() == std::vector<int32_t>{-2, 2, 7});
}

TEST_CASE("Cast between integer dtypes is exact and wraps as C++ and numpy do", "[ops][dtypes]") {
  // 2^63 + 1 is not a double: a cast through double would lose the 1.
  const uint64_t big = (uint64_t{1} << 63) + 1;
  const HostTensor u = HostTensor::make<uint64_t>(DType::kU64, {2}, {big, 5});
  CHECK(cast_to(u, "i64").values<int64_t>() == std::vector<int64_t>{std::numeric_limits<int64_t>::min() + 1, 5});
  CHECK(cast_to(u, "u16").values<uint16_t>() == std::vector<uint16_t>{1, 5});
  const HostTensor i = HostTensor::make<int16_t>(DType::kI16, {2}, {-1, 300});
  CHECK(cast_to(i, "u32").values<uint32_t>() == std::vector<uint32_t>{4294967295u, 300});
  CHECK(cast_to(i, "u8").values<uint8_t>() == std::vector<uint8_t>{255, 44});
  // Through a float: -1.5 becomes -1, which u16 wraps to 65535 (numpy's astype on x86).
  CHECK(cast_to(HostTensor::make<double>(DType::kF64, {1}, {-1.5}), "u16").values<uint16_t>() == std::vector<uint16_t>{65535});
}

TEST_CASE("Add, Sub, Mul and Div on f64 and the wide integers", "[ops][dtypes]") {
  CHECK(binary<double>("Add", DType::kF64, {0.1, 1e16}, {0.2, 1}) == std::vector<double>{0.1 + 0.2, 1e16 + 1});
  CHECK(binary<double>("Div", DType::kF64, {1, -1}, {3, 0}) == std::vector<double>{1.0 / 3, -std::numeric_limits<double>::infinity()});
  // u16 wraps: 65535 + 2 = 1, 3 - 5 = 65534, 300 * 300 = 90000 - 65536 = 24464.
  CHECK(binary<uint16_t>("Add", DType::kU16, {65535}, {2}) == std::vector<uint16_t>{1});
  CHECK(binary<uint16_t>("Sub", DType::kU16, {3}, {5}) == std::vector<uint16_t>{65534});
  CHECK(binary<uint16_t>("Mul", DType::kU16, {300, 65535}, {300, 65535}) == std::vector<uint16_t>{24464, 1});
  CHECK(binary<int16_t>("Div", DType::kI16, {-7, 7}, {2, -2}) == std::vector<int16_t>{-3, -3});
  CHECK(binary<uint64_t>("Mul", DType::kU64, {uint64_t{1} << 63}, {2}) == std::vector<uint64_t>{0});
  auto zero = run_op("Div", {HostTensor::make<uint32_t>(DType::kU32, {2}, {4, 4}), HostTensor::make<uint32_t>(DType::kU32, {2}, {2, 0})});
  REQUIRE_FALSE(zero.is_ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("division by zero") && Catch::Contains("element 1"));
}

TEST_CASE("Maximum, Minimum, Mod and Pow on f64 and the wide integers", "[ops][dtypes]") {
  CHECK(binary<double>("Maximum", DType::kF64, {1, 3, NAN}, {2, 2, 0})[0] == 2);
  CHECK(std::isnan(binary<double>("Minimum", DType::kF64, {1, 3, NAN}, {2, 2, 0})[2]));
  CHECK(binary<uint64_t>("Maximum", DType::kU64, {1, uint64_t{1} << 63}, {2, 1}) == std::vector<uint64_t>{2, uint64_t{1} << 63});
  CHECK(binary<int16_t>("Minimum", DType::kI16, {-3, 4}, {2, -5}) == std::vector<int16_t>{-3, -5});
  // Mod (fmod = 0) takes the divisor's sign: test_mod_mixed_sign_*.
  CHECK(binary<int16_t>("Mod", DType::kI16, {-4, 7, 5, -4, 7, 5}, {2, -3, 8, -2, 3, 5}) == std::vector<int16_t>{0, -2, 5, 0, 1, 0});
  const std::vector<double> mod = binary<double>("Mod", DType::kF64, {-4.3, 7.2}, {2.1, -3.4});
  CHECK(mod[0] == Approx(2.0).epsilon(1e-12));   // -4.3 = -3 * 2.1 + 2.0
  CHECK(mod[1] == Approx(-3.0).epsilon(1e-12));  // 7.2 = -3 * -3.4 - 3.0
  CHECK(binary<uint32_t>("Mod", DType::kU32, {4, 7, 5}, {2, 3, 8}) == std::vector<uint32_t>{0, 1, 5});
  CHECK(binary<uint16_t>("Pow", DType::kU16, {3, 2}, {4, 17}) == std::vector<uint16_t>{81, 0});
  CHECK(binary<double>("Pow", DType::kF64, {2, 9}, {0.5, 0.5}) == std::vector<double>{std::sqrt(2.0), 3});
}

TEST_CASE("Neg, Abs, the reductions and MatMul run on f64", "[ops][dtypes]") {
  const HostTensor x = HostTensor::make<double>(DType::kF64, {2, 2}, {1, -2, 3, -4});
  auto neg = run_op("Neg", {x});
  REQUIRE(neg.is_ok());
  CHECK(neg.value()[0].values<double>() == std::vector<double>{-1, 2, -3, 4});
  auto sum = run_op("ReduceSum", {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  REQUIRE(sum.is_ok());
  CHECK(sum.value()[0].values<double>() == std::vector<double>{-1, -1});
  // log(e^1 + e^-2) and log(e^3 + e^-4), worked in long double.
  auto lse = run_op("ReduceLogSumExp", {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  REQUIRE(lse.is_ok());
  const std::vector<double> got = lse.value()[0].values<double>();
  CHECK(lse.value()[0].shape == Shape{2, 1});
  CHECK(got[0] == Approx(static_cast<double>(std::log(std::exp(1.0L) + std::exp(-2.0L)))).epsilon(1e-15));
  CHECK(got[1] == Approx(static_cast<double>(std::log(std::exp(3.0L) + std::exp(-4.0L)))).epsilon(1e-15));
  // [[1, -2], [3, -4]] @ [[1, -2], [3, -4]] = [[-5, 6], [-9, 10]].
  const HostTensor y = HostTensor::make<double>(DType::kF64, {2, 2}, {1, -2, 3, -4});
  auto mm = run_op("MatMul", {x, y});
  REQUIRE(mm.is_ok());
  CHECK(mm.value()[0].values<double>() == std::vector<double>{-5, 6, -9, 10});
}
