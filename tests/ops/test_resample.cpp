// resample family: Resize against the outputs ONNX's operator documentation gives for its examples,
// and its errors; the cpu kernels of Resize and ResizeGrad against ref on random shapes in every
// mode. (Every mode is also checked against ONNX's reference by the PyTorch parity models,
// tests/parity/op_models.py.)
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "support/backend_compare.hpp"
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

namespace {

// A random resize of `x` (a scale per axis drawn from the ones models use, unchanged axes among
// them) with the given modes; `grad` makes it the ResizeGrad of that resize instead.
OpCase random_resize_case(std::mt19937& gen, const Shape& x, const Attrs& modes, bool grad, uint32_t seed) {
  static const double kScales[] = {1, 1, 2, 3, 0.5, 0.75, 4.0 / 3, 1.7, 0.4};
  Ints sizes;
  Reals scales;
  for (int64_t d : x) {
    const double s = kScales[std::uniform_int_distribution<size_t>(0, std::size(kScales) - 1)(gen)];
    sizes.push_back(std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(d) * s)));
    scales.push_back(s);
  }
  OpCase c;
  c.attrs = modes;
  c.attrs.set("scales", scales);
  if (grad) {
    c.op = "ResizeGrad";
    c.attrs.set("shape", x);
    c.inputs = {input(Shape(sizes.begin(), sizes.end()), seed)};
  } else {
    c.op = "Resize";
    c.attrs.set("sizes", sizes);
    c.inputs = {input(x, seed)};
  }
  return c;
}

std::vector<Attrs> every_resize_mode() {
  std::vector<Attrs> modes;
  for (const char* coordinates : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}) {
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      modes.push_back({{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string(coordinates)},
                       {"nearest_mode", std::string(nearest)}});
    }
    modes.push_back({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string(coordinates)}});
    for (int64_t exclude : {0, 1}) {
      for (double a : {-0.75, -0.5}) {
        modes.push_back({{"mode", std::string("cubic")}, {"coordinate_transformation_mode", std::string(coordinates)},
                         {"exclude_outside", exclude}, {"cubic_coeff_a", a}});
      }
    }
  }
  return modes;
}

}  // namespace

TEST_CASE("cpu Resize and ResizeGrad match ref in every mode on random shapes", "[ops][cpu][resample]") {
  std::mt19937 gen(17);
  uint32_t seed = 300;
  for (bool grad : {false, true}) {
    for (const Attrs& modes : every_resize_mode()) {
      const int rank = std::uniform_int_distribution<int>(1, 5)(gen);
      check_against_ref("cpu", random_resize_case(gen, random_shape(gen, rank, 1, 7), modes, grad, ++seed));
    }
  }
}

TEST_CASE("cpu Resize and ResizeGrad match ref on a U-Net sized upsampling, threaded and not", "[ops][cpu][resample]") {
  const Attrs bilinear{{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")},
                       {"sizes", Ints{2, 24, 34, 62}}, {"scales", Reals{1, 1, 2, 2}}};
  const Attrs nearest{{"mode", std::string("nearest")}, {"sizes", Ints{2, 24, 34, 62}}, {"scales", Reals{1, 1, 2, 2}}};
  for (int threads : {1, 0}) {
    for (const Attrs& a : {bilinear, nearest}) {
      check_against_ref("cpu", {"Resize", {input({2, 24, 17, 31}, 41)}, a}, "", threads);
      Attrs g = a;
      g.set("shape", Ints{2, 24, 17, 31});
      check_against_ref("cpu", {"ResizeGrad", {input({2, 24, 34, 62}, 42)}, g}, "", threads);
    }
  }
}
