// The activations ONNX exporters write beyond ReLU and GELU (Elu, Selu, Celu, Softplus, Softsign,
// ThresholdedRelu, Mish, PRelu): each op against its definition written here in double (ONNX's
// operators.md, PyTorch's functional forms), its gradients against central finite differences,
// and the cpu kernels against ref (the oracle), forward and backward.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"
#include "support/backend_under_test.hpp"
#include "support/expect_close.hpp"
#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluGamma = 1.0507009873554804934193349852946;

double softplus(double x) { return std::log1p(std::exp(x)); }

struct Definition {
  const char* op;
  Attrs attrs;
  std::function<double(double)> f;
  float range;  // inputs in [-range, range]: past every kink and saturation
};

std::vector<Definition> definitions() {
  return {
      {"Elu", {}, [](double x) { return x > 0 ? x : std::exp(x) - 1.0; }, 8.0f},
      {"Elu", {{"alpha", 0.5}}, [](double x) { return x > 0 ? x : 0.5 * (std::exp(x) - 1.0); }, 8.0f},
      // ONNX's defaults are PyTorch's SELU constants rounded to f32: agreement to 1e-7 relative.
      {"Selu", {}, [](double x) { return kSeluGamma * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1.0)); }, 8.0f},
      {"Selu", {{"alpha", 2.0}, {"gamma", 3.0}}, [](double x) { return 3.0 * (x > 0 ? x : 2.0 * (std::exp(x) - 1.0)); }, 8.0f},
      {"Celu", {}, [](double x) { return std::max(0.0, x) + std::min(0.0, std::exp(x) - 1.0); }, 8.0f},
      {"Celu", {{"alpha", 2.0}}, [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * (std::exp(x / 2.0) - 1.0)); }, 8.0f},
      {"Softplus", {}, softplus, 30.0f},
      {"Softsign", {}, [](double x) { return x / (1.0 + std::fabs(x)); }, 10.0f},
      {"ThresholdedRelu", {}, [](double x) { return x > 1.0 ? x : 0.0; }, 3.0f},
      {"ThresholdedRelu", {{"alpha", -0.5}}, [](double x) { return x > -0.5 ? x : 0.0; }, 3.0f},
      {"Mish", {}, [](double x) { return x * std::tanh(softplus(x)); }, 25.0f},
  };
}

Shape shape_of(size_t n) { return Shape{static_cast<int64_t>(n)}; }

}  // namespace

TEST_CASE("ONNX activations match their definitions", "[ops][elementwise]") {
  for (const Definition& d : definitions()) {
    const std::vector<float> x = random_floats(500, 11, -d.range, d.range);
    auto out = run_op_under_test(d.op, {HostTensor::f32(shape_of(x.size()), x)}, d.attrs);
    INFO(d.op);
    REQUIRE(out.is_ok());
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = d.f(x[i]);
    CHECK(mismatches(out.value()[0].f32(), want, 1e-5, 1e-6) == "");
  }
}

TEST_CASE("Celu refuses alpha = 0, which it divides by", "[ops][elementwise][errors]") {
  auto out = run_op_under_test("Celu", {HostTensor::f32({2}, {1.0f, -1.0f})}, {{"alpha", 0.0}});
  REQUIRE_FALSE(out.is_ok());
  CHECK(out.status().message().find("alpha") != std::string::npos);
}

TEST_CASE("PRelu: per-channel, shared and elementwise slopes broadcast to x", "[ops][elementwise]") {
  const HostTensor x = HostTensor::f32({1, 2, 1, 3}, {-1, 2, -3, 4, -5, 0});
  auto per_channel = run_op_under_test("PRelu", {x, HostTensor::f32({2, 1, 1}, {0.5f, -2.0f})});
  REQUIRE(per_channel.is_ok());
  CHECK(per_channel.value()[0].f32() == std::vector<float>{-0.5f, 2, -1.5f, 4, 10, 0});
  auto shared = run_op_under_test("PRelu", {x, HostTensor::f32({1}, {0.25f})});
  REQUIRE(shared.is_ok());
  CHECK(shared.value()[0].f32() == std::vector<float>{-0.25f, 2, -0.75f, 4, -1.25f, 0});
  auto per_element = run_op_under_test("PRelu", {x, HostTensor::f32({3}, {1, 2, 3})});
  REQUIRE(per_element.is_ok());
  CHECK(per_element.value()[0].f32() == std::vector<float>{-1, 2, -9, 4, -10, 0});
  // The slope broadcasts to x, never x to the slope (ONNX's unidirectional broadcast).
  auto wider = run_op_under_test("PRelu", {HostTensor::f32({3}, {1, 2, 3}), HostTensor::f32({2, 3}, {1, 1, 1, 1, 1, 1})});
  REQUIRE_FALSE(wider.is_ok());
  CHECK(wider.status().message().find("does not broadcast") != std::string::npos);
}

TEST_CASE("ONNX activation gradients match finite differences", "[grad][elementwise]") {
  const Shape shape{4, 5};
  for (const Definition& d : definitions()) {
    std::vector<float> v = random_floats(20, 21, -3.0f, 3.0f);
    // ThresholdedRelu jumps at alpha: keep every input beyond the step from it.
    const double alpha = d.attrs.get_float("alpha", 1.0);
    for (float& x : v) {
      if (std::string(d.op) == "ThresholdedRelu" && std::fabs(x - alpha) < 0.05) x = static_cast<float>(alpha + 0.1);
    }
    INFO(d.op);
    CHECK(check_op_gradients(d.op, {HostTensor::f32(shape, v)}, d.attrs, {true}));
  }
}

TEST_CASE("PRelu gradients for x and a broadcast slope match finite differences", "[grad][elementwise]") {
  const Shape x_shape{2, 3, 2, 2};
  std::vector<float> x = random_floats(24, 31, -2.0f, 2.0f);
  for (float& v : x) {
    if (std::fabs(v) < 0.05f) v = v < 0 ? -0.05f : 0.05f;  // away from the kink at 0
  }
  for (const Shape& slope : {Shape{3, 1, 1}, Shape{1}, Shape{2}, x_shape}) {
    INFO(shape_str(slope));
    const HostTensor s = HostTensor::f32(slope, random_floats(static_cast<size_t>(numel(slope)), 32, -0.5f, 0.5f));
    CHECK(check_op_gradients("PRelu", {HostTensor::f32(x_shape, x), s}, {}, {true, true}));
    CHECK(check_op_gradients("PRelu", {HostTensor::f32(x_shape, x), s}, {}, {false, true}));
  }
}

TEST_CASE("cpu ONNX activations match ref", "[ops][cpu]") {
  std::mt19937 gen(2);
  uint32_t seed = 4200;
  const std::vector<float> extremes = {-200.0f, -90.0f, -20.5f, 20.5f, 90.0f, 200.0f, NAN, -0.0f, 0.0f, 1.0f};
  for (const Definition& d : definitions()) {
    INFO(d.op);
    for (int trial = 0; trial < 2; ++trial) {
      const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 333)};  // odd sizes exercise loop tails
      check_against_ref("cpu", {d.op, {input(shape, ++seed, -d.range, d.range)}, d.attrs}, "cpu");
    }
    check_against_ref("cpu", {d.op, {input({41000}, ++seed, -d.range, d.range)}, d.attrs}, "cpu");  // thread pool
    // Extremes saturate instead of overflowing; NaN goes where ref sends it.
    check_against_ref("cpu", {d.op, {values(shape_of(extremes.size()), extremes)}, d.attrs}, "cpu");
  }
}

TEST_CASE("cpu ONNX activation gradients match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(3);
  uint32_t seed = 4300;
  const std::vector<float> extremes = {-200.0f, -90.0f, -20.5f, 20.5f, 90.0f, 200.0f, NAN, -0.0f, 0.0f, 1.0f};
  for (const Definition& d : definitions()) {
    const std::string op = std::string(d.op) + "Grad";
    INFO(op);
    const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 333)};
    check_against_ref("cpu", {op, {input(shape, ++seed), input(shape, ++seed, -d.range, d.range)}, d.attrs}, "cpu");
    check_against_ref("cpu", {op, {input({41000}, ++seed), input({41000}, ++seed, -d.range, d.range)}, d.attrs}, "cpu");
    const Shape n = shape_of(extremes.size());
    check_against_ref("cpu", {op, {input(n, ++seed), values(n, extremes)}, d.attrs}, "cpu");
  }
}

TEST_CASE("cpu PRelu and PReluGrad match ref for the slopes exporters write", "[ops][cpu][grad]") {
  std::mt19937 gen(4);
  uint32_t seed = 4400;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t n = random_dim(gen, 1, 3), c = random_dim(gen, 1, 9), h = random_dim(gen, 1, 7), w = random_dim(gen, 1, 9);
    const Shape x{n, c, h, w};
    for (const Shape& slope : {Shape{c, 1, 1}, Shape{1}, Shape{w}, Shape{1, c, 1, 1}, x}) {
      INFO(shape_str(x) << " slope " << shape_str(slope));
      check_against_ref("cpu", {"PRelu", {input(x, ++seed, -2.0f, 2.0f), input(slope, ++seed)}}, "cpu");
      check_against_ref("cpu", {"PReluGrad", {input(x, ++seed), input(x, ++seed, -2.0f, 2.0f), input(slope, ++seed)}}, "cpu");
    }
  }
  check_against_ref("cpu", {"PReluGrad", {input({4, 64, 32, 32}, 1), input({4, 64, 32, 32}, 2), input({64, 1, 1}, 3)}},
                    "cpu");  // thread pool
  // A slope that repeats over a middle axis is no pattern the cpu loops take: it runs on ref.
  check_against_ref("cpu", {"PReluGrad", {input({2, 3, 4}, 4), input({2, 3, 4}, 5), input({2, 1, 4}, 6)}}, "ref");
}
