// cpu math_unary kernels against ref: every function over its domain, at a size that splits over
// the thread pool (2^16 + 3 elements: a tail after the vector loop) and a small one; Round on
// halves, where the vector form must agree with nearbyint exactly; Shrink; IsNaN / IsInf with NaN
// and infinities among the values.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "support/backend_compare.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct Domain {
  const char* op;
  float lo, hi;
};

const Domain kDomains[] = {
    {"Acos", -1, 1},   {"Asin", -1, 1},  {"Atan", -10, 10}, {"Acosh", 1, 20},  {"Asinh", -20, 20}, {"Atanh", -0.99f, 0.99f},
    {"Cos", -10, 10},  {"Sin", -10, 10}, {"Tan", -1.5f, 1.5f}, {"Cosh", -10, 10}, {"Sinh", -10, 10}, {"Erf", -5, 5},
    {"Floor", -1e3f, 1e3f}, {"Ceil", -1e3f, 1e3f}, {"Round", -1e3f, 1e3f}, {"Sign", -2, 2},
};

const int64_t kLarge = (int64_t{1} << 16) + 3;

}  // namespace

TEST_CASE("cpu math_unary functions match ref", "[ops][cpu][math_unary]") {
  uint32_t seed = 7100;
  for (const Domain& d : kDomains) {
    for (int64_t n : {int64_t{37}, kLarge}) {
      OpCase c{d.op, {input({n}, ++seed, d.lo, d.hi)}};
      c.tolerance = 1e-5;  // relative: Erf is a rational approximation (a few ulp), Cosh / Sinh reach 1e4
      check_against_ref("cpu", c);
    }
  }
}

TEST_CASE("cpu Round matches ref exactly on halves and beyond 2^23", "[ops][cpu][math_unary]") {
  std::vector<float> x;
  for (int k = -2000; k <= 2000; ++k) x.push_back(static_cast<float>(k) * 0.5f);
  for (float big : {8388607.5f, 8388608.0f, 8388609.0f, 1e20f, -8388607.5f, -1e20f}) x.push_back(big);
  OpCase c{"Round", {values({static_cast<int64_t>(x.size())}, x)}};
  c.tolerance = 0.0;
  check_against_ref("cpu", c);
}

TEST_CASE("cpu Shrink, IsNaN and IsInf match ref", "[ops][cpu][math_unary]") {
  check_against_ref("cpu", {"Shrink", {input({kLarge}, 7201, -3, 3)}, Attrs{{"lambd", 1.25}, {"bias", 0.5}}});
  check_against_ref("cpu", {"Shrink", {input({19}, 7202, -1, 1)}});
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = uniform({kLarge}, 7203);
  for (size_t i = 0; i < x.size(); i += 7) x[i] = (i / 7) % 3 == 0 ? inf : ((i / 7) % 3 == 1 ? -inf : std::numeric_limits<float>::quiet_NaN());
  const Operand mixed = values({kLarge}, x);
  check_against_ref("cpu", {"IsNaN", {mixed}});
  check_against_ref("cpu", {"IsInf", {mixed}});
  check_against_ref("cpu", {"IsInf", {mixed}, Attrs{{"detect_positive", int64_t{0}}}});
  check_against_ref("cpu", {"IsInf", {mixed}, Attrs{{"detect_negative", int64_t{0}}}});
}
