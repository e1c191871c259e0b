// math_unary family on ref and cpu: each function against tabulated values (from math tables,
// not from libm), Round's halves, Sign's zeros and NaN, Shrink / IsNaN / IsInf / Hardmax against
// ONNX's operator examples, and the errors of bad inputs and attributes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "support/expect_close.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> run_f32(const std::string& op, const std::vector<float>& x, const std::string& backend, const Attrs& attrs = {}) {
  auto out = run_op(op, {HostTensor::f32({static_cast<int64_t>(x.size())}, x)}, attrs, {}, backend);
  INFO(op << " on " << backend << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  return out.value()[0].f32();
}

std::vector<uint8_t> run_bool(const std::string& op, const std::vector<float>& x, const std::string& backend, const Attrs& attrs = {}) {
  auto out = run_op(op, {HostTensor::f32({static_cast<int64_t>(x.size())}, x)}, attrs, {}, backend);
  INFO(op << " on " << backend << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].dtype == DType::kBool);
  return out.value()[0].values<uint8_t>();
}

struct Tabulated {
  const char* op;
  std::vector<float> x;
  std::vector<double> y;
};

// Values from tables (pi/6, pi/4, pi/3, ln(2 + sqrt 3), ...), to 16 digits.
const std::vector<Tabulated> kTables = {
    {"Acos", {0.5f, 0.0f, -1.0f, 1.0f}, {1.0471975511965976, 1.5707963267948966, 3.1415926535897932, 0.0}},
    {"Asin", {0.5f, 0.0f, -1.0f}, {0.5235987755982989, 0.0, -1.5707963267948966}},
    {"Atan", {1.0f, 0.0f, -1.0f}, {0.7853981633974483, 0.0, -0.7853981633974483}},
    {"Acosh", {1.0f, 2.0f}, {0.0, 1.3169578969248167}},
    {"Asinh", {0.0f, 1.0f, -1.0f}, {0.0, 0.8813735870195430, -0.8813735870195430}},
    {"Atanh", {0.0f, 0.5f, -0.5f}, {0.0, 0.5493061443340549, -0.5493061443340549}},
    {"Cos", {0.0f, 1.0f, -1.0f}, {1.0, 0.5403023058681398, 0.5403023058681398}},
    {"Sin", {0.0f, 1.0f, -1.0f}, {0.0, 0.8414709848078965, -0.8414709848078965}},
    {"Tan", {0.0f, 1.0f, -1.0f}, {0.0, 1.5574077246549023, -1.5574077246549023}},
    {"Cosh", {0.0f, 1.0f, -1.0f}, {1.0, 1.5430806348152437, 1.5430806348152437}},
    {"Sinh", {0.0f, 1.0f, -1.0f}, {0.0, 1.1752011936438014, -1.1752011936438014}},
    {"Erf", {0.0f, 0.5f, 1.0f, -2.0f, 5.0f}, {0.0, 0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 1.0}},
    {"Floor", {-1.5f, -1.0f, 0.3f, 2.0f, 2.7f}, {-2, -1, 0, 2, 2}},
    {"Ceil", {-1.5f, -1.0f, 0.3f, 2.0f, 2.7f}, {-1, -1, 1, 2, 3}},
    // Halves to the even neighbour (ONNX's test_round data), and floats too large to have a fraction.
    {"Round", {0.1f, 0.5f, 0.9f, 1.2f, 1.5f, 1.8f, 2.3f, 2.5f, 2.7f, -1.1f, -1.5f, -1.9f, -2.2f, -2.5f, -2.8f, 16777216.0f},
     {0, 0, 1, 1, 2, 2, 2, 2, 3, -1, -2, -2, -2, -2, -3, 16777216.0}},
    {"Sign", {-3.5f, -0.1f, 0.0f, 0.2f, 7.0f}, {-1, -1, 0, 1, 1}},
};

}  // namespace

TEST_CASE("math_unary functions give the tabulated values on ref and cpu", "[ops][math_unary]") {
  for (const std::string backend : {"ref", "cpu"}) {
    for (const Tabulated& t : kTables) {
      INFO(t.op << " on " << backend);
      CHECK(mismatches(run_f32(t.op, t.x, backend), t.y, 2e-6, 1e-7) == "");
    }
  }
}

TEST_CASE("Round keeps the sign of a zero result, and NaN and infinities pass every function", "[ops][math_unary]") {
  for (const std::string backend : {"ref", "cpu"}) {
    INFO(backend);
    const std::vector<float> r = run_f32("Round", {-0.4f, -0.5f, 0.4f}, backend);
    CHECK((r[0] == 0.0f && std::signbit(r[0])));
    CHECK((r[1] == 0.0f && std::signbit(r[1])));
    CHECK((r[2] == 0.0f && !std::signbit(r[2])));
    const std::vector<float> s = run_f32("Sign", {-0.0f, kNaN, kInf, -kInf}, backend);
    CHECK(std::signbit(s[0]));
    CHECK(std::isnan(s[1]));
    CHECK(s[2] == 1.0f);
    CHECK(s[3] == -1.0f);
    for (const char* op : {"Floor", "Ceil", "Round"}) {
      const std::vector<float> y = run_f32(op, {kNaN, kInf, -kInf}, backend);
      CHECK(std::isnan(y[0]));
      CHECK(y[1] == kInf);
      CHECK(y[2] == -kInf);
    }
    CHECK(std::isnan(run_f32("Acos", {2.0f}, backend)[0]));  // outside the domain, as numpy
  }
}

TEST_CASE("Shrink: ONNX's hard and soft examples", "[ops][math_unary]") {
  for (const std::string backend : {"ref", "cpu"}) {
    INFO(backend);
    const std::vector<float> x{-2, -1, 0, 1, 2};
    CHECK(mismatches(run_f32("Shrink", x, backend, Attrs{{"lambd", 1.5}}), {-2, 0, 0, 0, 2}) == "");
    CHECK(mismatches(run_f32("Shrink", x, backend, Attrs{{"lambd", 1.5}, {"bias", 1.5}}), {-0.5, 0, 0, 0, 0.5}) == "");
    // The defaults: lambd 0.5, bias 0; the bounds themselves map to 0.
    CHECK(mismatches(run_f32("Shrink", {-0.5f, 0.5f, 0.75f}, backend), {0, 0, 0.75}) == "");
  }
}

TEST_CASE("IsNaN and IsInf write bool, with detect_negative / detect_positive", "[ops][math_unary]") {
  const std::vector<float> x{-1.2f, kNaN, kInf, 2.8f, -kInf, kInf};
  for (const std::string backend : {"ref", "cpu"}) {
    INFO(backend);
    CHECK(run_bool("IsNaN", x, backend) == std::vector<uint8_t>{0, 1, 0, 0, 0, 0});
    CHECK(run_bool("IsInf", x, backend) == std::vector<uint8_t>{0, 0, 1, 0, 1, 1});
    CHECK(run_bool("IsInf", x, backend, Attrs{{"detect_negative", int64_t{0}}}) == std::vector<uint8_t>{0, 0, 1, 0, 0, 1});
    CHECK(run_bool("IsInf", x, backend, Attrs{{"detect_positive", int64_t{0}}}) == std::vector<uint8_t>{0, 0, 0, 0, 1, 0});
  }
}

TEST_CASE("Hardmax marks the first maximum along the axis", "[ops][math_unary]") {
  // ONNX's hardmax example, and ties (test_hardmax_one_hot): the first one wins.
  auto example = run_op("Hardmax", {HostTensor::f32({4, 4}, {3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3})});
  REQUIRE(example.is_ok());
  CHECK(example.value()[0].f32() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  auto ties = run_op("Hardmax", {HostTensor::f32({1, 4}, {2, 4, 4, 1})});
  REQUIRE(ties.is_ok());
  CHECK(ties.value()[0].f32() == std::vector<float>{0, 1, 0, 0});
  // A NaN is the maximum, as numpy.argmax (ONNX's reference) takes it.
  auto nan = run_op("Hardmax", {HostTensor::f32({1, 3}, {1, kNaN, 3})});
  REQUIRE(nan.is_ok());
  CHECK(nan.value()[0].f32() == std::vector<float>{0, 1, 0});
  // [2, 2, 2] along axis 1 and axis 0: each (outer, inner) line gets one 1.
  const HostTensor x = HostTensor::f32({2, 2, 2}, {1, 8, 5, 2, 7, 3, 4, 9});
  auto mid = run_op("Hardmax", {x}, Attrs{{"axis", int64_t{1}}});
  REQUIRE(mid.is_ok());
  CHECK(mid.value()[0].f32() == std::vector<float>{0, 1, 1, 0, 1, 0, 0, 1});
  const HostTensor x2 = HostTensor::f32({2, 2, 2}, {1, 8, 5, 2, 0, 9, 6, 1});
  auto first = run_op("Hardmax", {x2}, Attrs{{"axis", int64_t{-3}}});
  REQUIRE(first.is_ok());
  CHECK(first.value()[0].f32() == std::vector<float>{1, 0, 0, 1, 0, 1, 1, 0});
  auto last = run_op("Hardmax", {x2});
  REQUIRE(last.is_ok());
  CHECK(last.value()[0].f32() == std::vector<float>{0, 1, 1, 0, 0, 1, 1, 0});
}

TEST_CASE("math_unary refuses bad inputs and attributes with a message naming them", "[ops][math_unary]") {
  auto ints = run_op("Sin", {HostTensor::i64({2}, {1, 2})});
  REQUIRE_FALSE(ints.is_ok());
  CHECK(ints.status().message().find("x must be f32, got i64") != std::string::npos);
  auto test = run_op("IsNaN", {HostTensor::i32({2}, {1, 2})});
  REQUIRE_FALSE(test.is_ok());
  CHECK(test.status().message().find("x must be f32") != std::string::npos);
  auto axis = run_op("Hardmax", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, Attrs{{"axis", int64_t{2}}});
  REQUIRE_FALSE(axis.is_ok());
  CHECK(axis.status().message().find("axis 2 is out of range for rank 2") != std::string::npos);
  auto scalar = run_op("Hardmax", {HostTensor::f32({}, {1})});
  REQUIRE_FALSE(scalar.is_ok());
  CHECK(scalar.status().message().find("rank >= 1") != std::string::npos);
  auto lambd = run_op("Shrink", {HostTensor::f32({2}, {1, 2})}, Attrs{{"lambd", -1.0}});
  REQUIRE_FALSE(lambd.is_ok());
  CHECK(lambd.status().message().find("lambd must be >= 0") != std::string::npos);
}
