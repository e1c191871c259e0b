// math_unary gradients against central finite differences, and the piecewise-constant ops
// (Floor, Ceil, Round, Sign, Hardmax) as constants for autodiff: no gradient reaches their input.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor uniform(Shape shape, uint32_t seed, float lo, float hi) {
  return HostTensor::f32(shape, random_floats(static_cast<size_t>(numel(shape)), seed, lo, hi));
}

}  // namespace

TEST_CASE("math_unary gradients match finite differences", "[grad][math_unary]") {
  struct Case {
    const char* op;
    float lo, hi;
  };
  const Shape shape{3, 4};
  uint32_t seed = 61;
  for (const Case& c : {Case{"Sin", -3, 3}, Case{"Cos", -3, 3}, Case{"Tan", -1.2f, 1.2f}, Case{"Sinh", -2, 2},
                        Case{"Cosh", -2, 2}, Case{"Asin", -0.8f, 0.8f}, Case{"Acos", -0.8f, 0.8f}, Case{"Atan", -3, 3},
                        Case{"Asinh", -3, 3}, Case{"Acosh", 1.2f, 4}, Case{"Atanh", -0.8f, 0.8f}, Case{"Erf", -2, 2}}) {
    INFO(c.op);
    GradCheckOptions o;
    o.step = 1e-3;
    CHECK(check_op_gradients(c.op, {uniform(shape, ++seed, c.lo, c.hi)}, {}, {true}, o));
  }
}

TEST_CASE("Shrink's gradient passes dy outside [-lambd, lambd]", "[grad][math_unary]") {
  // Values at least 0.05 away from the kinks at +-0.75.
  std::vector<float> v = random_floats(20, 71, -2, 2);
  for (float& x : v) {
    if (std::fabs(std::fabs(x) - 0.75f) < 0.05f) x += 0.1f;
  }
  CHECK(check_op_gradients("Shrink", {HostTensor::f32({4, 5}, v)}, Attrs{{"lambd", 0.75}, {"bias", 0.25}}, {true}));
}

TEST_CASE("Floor, Ceil, Round, Sign and Hardmax pass no gradient to their input", "[grad][math_unary]") {
  // Their derivative is 0 wherever it exists (finite differences away from the steps agree), and
  // autodiff emits none: a parameter reached only through them gets no gradient, so a loss that
  // depends on nothing else has no trainable parameter.
  const HostTensor x = HostTensor::f32({4}, {1.3f, -0.6f, 2.2f, -1.7f});
  for (const char* op : {"Floor", "Ceil", "Round", "Sign", "Hardmax"}) {
    INFO(op);
    const GradCheckReport r = check_op_gradients(op, {x}, {}, {true});
    CHECK_FALSE(r.ok);
    CHECK(r.message.find("no trainable parameter influences the loss") != std::string::npos);
  }
}
