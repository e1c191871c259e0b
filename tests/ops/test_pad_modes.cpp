// Pad in ONNX's reflect and edge modes and its gradient PadGrad: forward against numpy.pad's
// numbers (written out here), the gradient against hand sums and central finite differences,
// the schema's refusals, and the cpu kernels against ref.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

const HostTensor kX23 = HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
const Ints kPads{1, 2, 1, 1};  // rows: 1 before, 1 after; columns: 2 before, 1 after

std::vector<float> padded(const std::string& mode) {
  auto out = run_op("Pad", {kX23}, {{"pads", kPads}, {"mode", mode}});
  INFO(out.status().to_string());
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].shape == Shape{4, 6});
  return out.value()[0].f32();
}

}  // namespace

TEST_CASE("Pad reflect and edge give numpy.pad's values", "[ops][shape]") {
  // numpy.pad([[1, 2, 3], [4, 5, 6]], ((1, 1), (2, 1)), mode)
  CHECK(padded("reflect") == std::vector<float>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2});
  CHECK(padded("edge") == std::vector<float>{1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6});
}

TEST_CASE("Pad refuses border modes it cannot compute, naming the problem", "[ops][shape][errors]") {
  auto reflect_too_far = run_op("Pad", {kX23}, {{"pads", Ints{2, 0, 0, 0}}, {"mode", std::string("reflect")}});
  REQUIRE_FALSE(reflect_too_far.is_ok());
  CHECK_THAT(reflect_too_far.status().message(), Catch::Contains("more than its size - 1"));
  auto crop = run_op("Pad", {kX23}, {{"pads", Ints{0, -1, 0, 0}}, {"mode", std::string("edge")}});
  REQUIRE_FALSE(crop.is_ok());
  CHECK_THAT(crop.status().message(), Catch::Contains("cannot crop"));
  auto empty = run_op("Pad", {HostTensor::f32({0, 2}, {})}, {{"pads", Ints{1, 0, 0, 0}}, {"mode", std::string("edge")}});
  REQUIRE_FALSE(empty.is_ok());
  CHECK_THAT(empty.status().message(), Catch::Contains("empty"));
  auto wrap = run_op("Pad", {kX23}, {{"pads", Ints{1, 0, 0, 0}}, {"mode", std::string("wrap")}});
  REQUIRE_FALSE(wrap.is_ok());
  CHECK_THAT(wrap.status().message(), Catch::Contains("'wrap'"));
}

TEST_CASE("PadGrad adds each border element's gradient to the element it copied", "[ops][shape][grad]") {
  // x [3] padded by 2 before, 1 after. reflect reads x2 x1 | x0 x1 x2 | x1; edge x0 x0 | x0 x1 x2 | x2.
  const HostTensor dy = HostTensor::f32({6}, {1, 2, 3, 4, 5, 6});
  auto reflect = run_op("PadGrad", {dy}, {{"pads", Ints{2, 1}}, {"mode", std::string("reflect")}});
  REQUIRE(reflect.is_ok());
  CHECK(reflect.value()[0].f32() == std::vector<float>{3, 2 + 4 + 6, 1 + 5});
  auto edge = run_op("PadGrad", {dy}, {{"pads", Ints{2, 1}}, {"mode", std::string("edge")}});
  REQUIRE(edge.is_ok());
  CHECK(edge.value()[0].f32() == std::vector<float>{1 + 2 + 3, 4, 5 + 6});
}

TEST_CASE("Pad reflect and edge gradients match finite differences", "[grad][shape]") {
  const Shape shape{2, 3, 4, 5};
  const HostTensor x = HostTensor::f32(shape, random_floats(static_cast<size_t>(numel(shape)), 51, -1.0f, 1.0f));
  for (const char* mode : {"reflect", "edge"}) {
    INFO(mode);
    CHECK(check_op_gradients("Pad", {x}, {{"pads", Ints{0, 1, 2, 3, 0, 2, 1, 4}}, {"mode", std::string(mode)}}, {true}));
    CHECK(check_op_gradients("Pad", {x}, {{"pads", Ints{0, 0, 0, 1, 0, 0, 0, 0}}, {"mode", std::string(mode)}}, {true}));
  }
}

TEST_CASE("cpu Pad and PadGrad in reflect and edge modes match ref", "[ops][cpu]") {
  std::mt19937 gen(61);
  uint32_t seed = 6100;
  for (const char* mode : {"reflect", "edge"}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Shape x{random_dim(gen, 1, 3), random_dim(gen, 2, 5), random_dim(gen, 2, 9), random_dim(gen, 2, 9)};
      Ints pads(8);
      for (size_t d = 0; d < 4; ++d) {
        pads[d] = random_dim(gen, 0, x[d] - 1);
        pads[d + 4] = random_dim(gen, 0, x[d] - 1);
      }
      Shape y = x;
      for (size_t d = 0; d < 4; ++d) y[d] += pads[d] + pads[d + 4];
      const Attrs attrs{{"pads", pads}, {"mode", std::string(mode)}};
      INFO(mode << " x " << shape_str(x) << " pads " << shape_str(pads));
      check_against_ref("cpu", {"Pad", {input(x, ++seed)}, attrs}, "cpu");
      check_against_ref("cpu", {"PadGrad", {input(y, ++seed)}, attrs}, "cpu");
    }
  }
  // Wide enough for the thread pool.
  const Attrs attrs{{"pads", Ints{0, 0, 2, 2, 0, 0, 1, 3}}, {"mode", std::string("reflect")}};
  check_against_ref("cpu", {"Pad", {input({4, 16, 40, 40}, 1)}, attrs}, "cpu");
  check_against_ref("cpu", {"PadGrad", {input({4, 16, 43, 45}, 2)}, attrs}, "cpu");
}
