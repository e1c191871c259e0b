// Finite-difference checks of every elementwise gradient rule, with broadcasting.
#include <catch2/catch.hpp>

#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor uniform(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return HostTensor::f32(shape, random_floats(static_cast<size_t>(numel(shape)), seed, lo, hi));
}

// Random values kept at least `gap` away from every kink, so central differences stay on one side.
HostTensor away_from(Shape shape, uint32_t seed, float lo, float hi, std::vector<float> kinks, float gap = 0.05f) {
  std::vector<float> v = random_floats(static_cast<size_t>(numel(shape)), seed, lo, hi);
  for (float& x : v) {
    for (float k : kinks) {
      if (std::fabs(x - k) < gap) x = k + (x < k ? -gap : gap);
    }
  }
  return HostTensor::f32(shape, v);
}

// Grid values for max/min: a on multiples of 0.1, b halfway between, so no pair is within 0.05.
HostTensor grid(Shape shape, uint32_t seed, float offset) {
  std::vector<float> v = random_floats(static_cast<size_t>(numel(shape)), seed, -10.0f, 10.0f);
  for (float& x : v) x = std::round(x) * 0.1f + offset;
  return HostTensor::f32(shape, v);
}

struct ShapePair {
  Shape a, b;
};

const std::vector<ShapePair> kBroadcastCases = {
    {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1, 4}, {3, 1}}, {{}, {2, 2}}, {{2, 2}, {1, 1}},
};

}  // namespace

TEST_CASE("Add, Sub, Mul gradients match finite differences under broadcasting", "[grad][elementwise]") {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    for (size_t k = 0; k < kBroadcastCases.size(); ++k) {
      const ShapePair& s = kBroadcastCases[k];
      INFO(op << " " << shape_str(s.a) << " with " << shape_str(s.b));
      CHECK(check_op_gradients(op, {uniform(s.a, 1 + k), uniform(s.b, 11 + k)}, {}, {true, true}));
    }
  }
}

TEST_CASE("Div and Pow gradients match finite differences", "[grad][elementwise]") {
  for (size_t k = 0; k < kBroadcastCases.size(); ++k) {
    const ShapePair& s = kBroadcastCases[k];
    INFO(shape_str(s.a) << " with " << shape_str(s.b));
    CHECK(check_op_gradients("Div", {uniform(s.a, 2 + k), uniform(s.b, 12 + k, 0.5f, 1.5f)}, {}, {true, true}));
    CHECK(check_op_gradients("Pow", {uniform(s.a, 3 + k, 0.5f, 1.5f), uniform(s.b, 13 + k, -1.0f, 2.0f)}, {}, {true, true}));
  }
}

TEST_CASE("Maximum and Minimum send the gradient to the winner", "[grad][elementwise]") {
  for (const char* op : {"Maximum", "Minimum"}) {
    for (size_t k = 0; k < kBroadcastCases.size(); ++k) {
      const ShapePair& s = kBroadcastCases[k];
      INFO(op << " " << shape_str(s.a) << " with " << shape_str(s.b));
      CHECK(check_op_gradients(op, {grid(s.a, 4 + k, 0.0f), grid(s.b, 14 + k, 0.05f)}, {}, {true, true}));
    }
  }
}

TEST_CASE("a frozen operand gets no gradient and the other still does", "[grad][elementwise]") {
  CHECK(check_op_gradients("Mul", {uniform({2, 3}, 5), uniform({3}, 6)}, {}, {true, false}));
  CHECK(check_op_gradients("Sub", {uniform({2, 3}, 7), uniform({3}, 8)}, {}, {false, true}));
}

TEST_CASE("unary math gradients match finite differences", "[grad][elementwise]") {
  struct Case {
    const char* op;
    float lo, hi;
  };
  const Shape shape{3, 4};
  for (const Case& c : {Case{"Neg", -2, 2}, Case{"Exp", -1, 1}, Case{"Log", 0.5f, 2}, Case{"Sqrt", 0.5f, 2},
                        Case{"Rsqrt", 0.5f, 2}, Case{"Reciprocal", 0.5f, 2}, Case{"Square", -2, 2}, Case{"Sigmoid", -3, 3},
                        Case{"Tanh", -2, 2}, Case{"Silu", -3, 3}, Case{"Identity", -1, 1}}) {
    INFO(c.op);
    CHECK(check_op_gradients(c.op, {uniform(shape, 21, c.lo, c.hi)}, {}, {true}));
  }
}

TEST_CASE("activation gradients match finite differences away from their kinks", "[grad][elementwise]") {
  const Shape shape{4, 5};
  CHECK(check_op_gradients("Relu", {away_from(shape, 31, -2, 2, {0})}, {}, {true}));
  CHECK(check_op_gradients("Abs", {away_from(shape, 32, -2, 2, {0})}, {}, {true}));
  CHECK(check_op_gradients("Relu6", {away_from(shape, 33, -2, 8, {0, 6})}, {}, {true}));
  CHECK(check_op_gradients("LeakyRelu", {away_from(shape, 34, -2, 2, {0})}, Attrs{{"alpha", 0.2}}, {true}));
  CHECK(check_op_gradients("HardSigmoid", {away_from(shape, 35, -5, 5, {-3, 3})}, {}, {true}));
  CHECK(check_op_gradients("HardSwish", {away_from(shape, 36, -5, 5, {-3, 3})}, {}, {true}));
  CHECK(check_op_gradients("Clip", {away_from(shape, 37, -1, 1, {-0.5f, 0.5f})}, Attrs{{"min", -0.5}, {"max", 0.5}}, {true}));
  CHECK(check_op_gradients("Clip", {away_from(shape, 38, -1, 1, {0.25f})}, Attrs{{"max", 0.25}}, {true}));
  CHECK(check_op_gradients("Gelu", {uniform(shape, 39, -3, 3)}, {}, {true}));
  CHECK(check_op_gradients("Gelu", {uniform(shape, 40, -3, 3)}, Attrs{{"approximate", std::string("tanh")}}, {true}));
}

TEST_CASE("ScaleShift and Cast gradients match finite differences", "[grad][elementwise]") {
  CHECK(check_op_gradients("ScaleShift", {uniform({2, 5}, 41)}, Attrs{{"alpha", 2.5}, {"beta", 1.0}}, {true}));
  CHECK(check_op_gradients("Cast", {uniform({2, 5}, 42)}, Attrs{{"to", std::string("f32")}}, {true}));
}

TEST_CASE("Where routes the gradient to the chosen branch, with broadcasting", "[grad][elementwise]") {
  const HostTensor cond = HostTensor::boolean({2, 3}, {1, 0, 1, 0, 0, 1});
  CHECK(check_op_gradients("Where", {cond, uniform({2, 3}, 51), uniform({3}, 52)}, {}, {false, true, true}));
  CHECK(check_op_gradients("Where", {cond, uniform({1, 3}, 53), uniform({2, 1}, 54)}, {}, {false, true, true}));
}

TEST_CASE("a gradient check catches a wrong gradient", "[grad][harness]") {
  // Relu at values straddling the kink within the step: finite differences see a half slope there,
  // the rule a full one (or none). The harness must report it, not pass it.
  const HostTensor x = HostTensor::f32({2}, {0.001f, -0.001f});
  GradCheckOptions o;
  o.step = 1e-2;
  const GradCheckReport r = check_op_gradients("Relu", {x}, {}, {true}, o);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("Relu input 0") != std::string::npos);
}
