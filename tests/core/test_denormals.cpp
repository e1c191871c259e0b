// Denormals: a run flushes them to zero (they cost ~100x per multiply and carry nothing a model
// can use), and the caller's floating-point mode is restored afterwards.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// A product computed at run time in the caller's mode (volatile: not folded by the compiler).
float runtime_product(float a, float b) {
  volatile float x = a, y = b;
  return x * y;
}

}  // namespace

TEST_CASE("a run flushes denormal results to zero and restores the caller's mode", "[runtime][denormals]") {
  REQUIRE(std::fpclassify(runtime_product(1e-20f, 1e-20f)) == FP_SUBNORMAL);  // IEEE mode before
  for (const std::string backend : {"ref", "cpu"}) {
    INFO("backend " << backend);
    auto out = run_op("Mul", {HostTensor::f32({3}, {1e-20f, 1e-20f, 2.0f}), HostTensor::f32({3}, {1e-20f, 1.0f, 3.0f})},
                      {}, {}, backend);
    REQUIRE(out.is_ok());
    const std::vector<float> y = out.value()[0].f32();
    CHECK(y[0] == 0.0f);  // 1e-40 is denormal in f32: flushed
    CHECK(y[1] == 1e-20f);
    CHECK(y[2] == 6.0f);
    CHECK(std::fpclassify(runtime_product(1e-20f, 1e-20f)) == FP_SUBNORMAL);  // the caller's mode is back
  }
}

TEST_CASE("softmax tails below exp's range are exactly zero, not tiny numbers", "[runtime][denormals]") {
  // exp(-100) is 3.7e-44 (denormal); a softmax probability that small must be 0 so that products
  // which read it (attention) stay fast. The cpu kernel clamps its exp and must return 0 there.
  for (const std::string backend : {"ref", "cpu"}) {
    INFO("backend " << backend);
    auto out = run_op("Softmax", {HostTensor::f32({1, 4}, {0.0f, -90.0f, -200.0f, -1.0f})}, {}, {}, backend);
    REQUIRE(out.is_ok());
    const std::vector<float> y = out.value()[0].f32();
    CHECK(y[1] == 0.0f);
    CHECK(y[2] == 0.0f);
    CHECK(std::fabs(y[0] + y[3] - 1.0f) < 1e-6f);
  }
}
