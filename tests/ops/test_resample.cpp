// resample family: Resize against the outputs ONNX's operator documentation gives for its examples,
// and its errors. (Every mode is also checked against ONNX's reference by the PyTorch parity
// models, tests/parity/op_models.py.)
#include <catch2/catch.hpp>

#include <string>

#include "support/expect_close.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

namespace {

Attrs resize_attrs(const std::string& mode, const std::string& coordinates, const Ints& sizes, const Reals& scales) {
  return Attrs{{"mode", mode}, {"coordinate_transformation_mode", coordinates}, {"sizes", sizes}, {"scales", scales}};
}

const HostTensor kTwoByTwo = HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4});

}  // namespace

TEST_CASE("Resize nearest repeats pixels (ONNX's upsample_scales_nearest)", "[ops][resample]") {
  auto out = run_op("Resize", {kTwoByTwo}, resize_attrs("nearest", "half_pixel", {1, 1, 4, 6}, {1, 1, 2, 3}));
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() ==
        std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST_CASE("Resize linear, half_pixel and align_corners (ONNX's examples)", "[ops][resample]") {
  auto half = run_op("Resize", {kTwoByTwo}, resize_attrs("linear", "half_pixel", {1, 1, 4, 4}, {1, 1, 2, 2}));
  REQUIRE(half.is_ok());
  CHECK(mismatches(half.value()[0].f32(), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}) == "");
  auto corners = run_op("Resize", {kTwoByTwo}, resize_attrs("linear", "align_corners", {1, 1, 4, 4}, {1, 1, 2, 2}));
  REQUIRE(corners.is_ok());
  const double t = 1.0 / 3;
  CHECK(mismatches(corners.value()[0].f32(), {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 2 + t, 2 + 2 * t, 3, 3 + t, 3, 3 + t, 3 + 2 * t, 4}) == "");
  // downsample_scales_linear: scales 0.6 map output 0 to input 0.3333 and output 1 to 2 (width).
  auto down = run_op("Resize", {HostTensor::f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                     resize_attrs("linear", "half_pixel", {1, 1, 1, 2}, {1, 1, 0.6, 0.6}));
  REQUIRE(down.is_ok());
  CHECK(mismatches(down.value()[0].f32(), {2.6666665, 4.3333331}) == "");
}

TEST_CASE("Resize nearest_mode picks the neighbour at a tie", "[ops][resample]") {
  // asymmetric with scale 2: output j reads input j / 2; j = 1 is the tie 0.5.
  const HostTensor x = HostTensor::f32({3}, {10, 20, 30});
  const std::vector<std::pair<const char*, std::vector<float>>> cases = {
      {"round_prefer_floor", {10, 10, 20, 20, 30, 30}},
      {"round_prefer_ceil", {10, 20, 20, 30, 30, 30}},
      {"floor", {10, 10, 20, 20, 30, 30}},
      {"ceil", {10, 20, 20, 30, 30, 30}}};
  for (const auto& [rounding, expected] : cases) {
    DYNAMIC_SECTION(rounding) {
      Attrs attrs = resize_attrs("nearest", "asymmetric", {6}, {2});
      attrs.set("nearest_mode", std::string(rounding));
      auto out = run_op("Resize", {x}, attrs);
      REQUIRE(out.is_ok());
      CHECK(out.value()[0].f32() == expected);
    }
  }
}

TEST_CASE("Resize shape inference and errors", "[ops][resample][errors]") {
  auto shape = infer("Resize", {f32({1, 3, 4, 4})}, resize_attrs("cubic", "align_corners", {1, 3, 8, 2}, {1, 1, 2, 0.5}));
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{1, 3, 8, 2});
  CHECK_FALSE(infer("Resize", {f32({1, 3, 4, 4})}, resize_attrs("cubic", "half_pixel", {1, 3, 8}, {1, 1, 2})).is_ok());
  CHECK_FALSE(infer("Resize", {f32({4, 4})}, resize_attrs("area", "half_pixel", {8, 8}, {2, 2})).is_ok());
  auto crop = infer("Resize", {f32({4, 4})}, resize_attrs("linear", "tf_crop_and_resize", {8, 8}, {2, 2}));
  REQUIRE_FALSE(crop.is_ok());
  CHECK(crop.status().message().find("coordinate_transformation_mode") != std::string::npos);
  CHECK_FALSE(infer("Resize", {f32({4, 4})}, resize_attrs("linear", "half_pixel", {8, 8}, {2, 0})).is_ok());
}
