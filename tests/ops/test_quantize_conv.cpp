// quantize_conv family: ConvInteger and QLinearConv against onnxruntime 1.19's outputs (the cases
// it runs: uint8 / uint8 ConvInteger with groups, strides, dilations and padding; QLinearConv on
// uint8 x and int8 w with a per-channel w_scale and a bias), against a direct numpy loop of ONNX's
// definition where onnxruntime has no kernel (int8 ConvInteger with a per-channel w_zero_point),
// and against hand values for the rounding (ties to even) and the saturation; then the errors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

HostTensor u8(Shape shape, const std::vector<uint8_t>& v) { return HostTensor::make(DType::kU8, std::move(shape), v); }
HostTensor i8(Shape shape, const std::vector<int8_t>& v) { return HostTensor::make(DType::kI8, std::move(shape), v); }

}  // namespace

TEST_CASE("ConvInteger uint8 with zero points, groups, strides, dilations and padding matches onnxruntime", "[ops][quantize_conv]") {
  const HostTensor x = u8({1, 2, 4, 5}, {175, 196, 25,  246, 67,  211, 151, 103, 92, 185, 142, 23,  72,  89,
                                          110, 42,  218, 136, 167, 230, 68,  176, 127, 135, 172, 0,   75, 55,
                                          250, 6,   19,  188, 44,  191, 69,  56,  152, 183, 181, 112});
  const HostTensor w = u8({4, 1, 2, 2}, {251, 189, 192, 34, 56, 201, 206, 38, 4, 238, 137, 87, 227, 195, 72, 83});
  const Attrs window{{"strides", Ints{1, 2}}, {"pads", Ints{1, 0, 0, 1}}, {"dilations", Ints{2, 1}}, {"groups", int64_t{2}}};
  auto out = run_op("ConvInteger", {x, w, u8({}, {131}), u8({}, {120})}, window);
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].dtype == DType::kI32);
  CHECK(out.value()[0].shape == Shape{1, 4, 3, 3});
  CHECK(out.value()[0].values<int32_t>() ==
        std::vector<int32_t>{4040,  1338,  3888,  20329, -6587, -9896, -2030,  -9095, 14202, 5240,  790,    4644,
                             12251, 14469, 2290,  -18288, -3889, 5058, -379,   -5219, -2125, 8833,  -2523,  -5810,
                             6620,  22092, 14177, 8360,  -755,  6000,  -99,    1828,  7363,  -15394, -3553, -12463});
}

TEST_CASE("ConvInteger int8 with a per-channel w_zero_point matches ONNX's definition", "[ops][quantize_conv]") {
  // y = sum (x - (-3)) (w - w_zp[o]) with w_zp = (2, -1); pads (0, 1, 1, 0): the padded taps add 0.
  const HostTensor x = i8({1, 1, 3, 3}, {59, -127, 112, 3, 8, 87, 81, -60, -56});
  const HostTensor w = i8({2, 1, 2, 2}, {-14, 32, -50, -109, 25, -11, -38, 38});
  auto out = run_op("ConvInteger", {x, w, i8({}, {-3}), i8({2}, {2, -1})}, Attrs{{"pads", Ints{0, 1, 1, 0}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int32_t>() == std::vector<int32_t>{1194, -6245, -5128, -9144, 2193, 11371, 2520, -3054, -678,
                                                                 -386, 3059,  -1271, 3216,  -5285, -572, -840, 2754, -952});
}

TEST_CASE("ConvInteger without zero points sums the raw products", "[ops][quantize_conv]") {
  auto out = run_op("ConvInteger", {u8({1, 1, 2, 2}, {1, 2, 3, 250}), i8({1, 1, 2, 2}, {1, -1, 2, 1})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int32_t>() == std::vector<int32_t>{1 - 2 + 6 + 250});
}

TEST_CASE("QLinearConv uint8 by int8 with a per-channel w_scale and a bias matches onnxruntime", "[ops][quantize_conv]") {
  const HostTensor x = u8({1, 2, 4, 4}, {153, 191, 80, 91, 81, 183, 13, 76, 161, 71, 82, 24, 109, 92, 176, 253,
                                         160, 45, 236, 125, 132, 34, 140, 129, 74, 37, 245, 231, 212, 81, 91, 152});
  const HostTensor w = i8({2, 2, 3, 3}, {120, 17,  -61, -58, 43,  -14, 114,  64, -3,  -49, -32, -105,
                                         27,  -58, -39, -21, 10,  57,  -101, -84, 117, 14,  -121, 55,
                                         -49, 64,  40,  112, -101, 120, 95,  5,   53,  -57, 50,  99});
  auto out = run_op("QLinearConv",
                    {x, HostTensor::f32({}, {0.02f}), u8({}, {120}), w, HostTensor::f32({2}, {0.01f, 0.03f}), i8({2}, {0, 0}),
                     HostTensor::f32({}, {0.25f}), u8({}, {128}), HostTensor::i32({2}, {300, -2000})},
                    Attrs{{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].dtype == DType::kU8);
  CHECK(out.value()[0].values<uint8_t>() == std::vector<uint8_t>{123, 119, 137, 130, 95, 107, 89, 119});
}

TEST_CASE("QLinearConv to int8 rounds ties to even and saturates", "[ops][quantize_conv]") {
  // 1x1 kernels (1, 127), every multiplier 0.5 / 1: channel 0 gives 0.5, 1.5, 2.5, -2.5 -> 0, 2, 2, -2;
  // channel 1 gives 63.5, 190.5, 317.5, -317.5 -> 64, 190, 318, -318; then + (-1), saturated.
  auto out = run_op("QLinearConv", {i8({1, 1, 1, 4}, {1, 3, 5, -5}), HostTensor::f32({}, {0.5f}), i8({}, {0}),
                                    i8({2, 1, 1, 1}, {1, 127}), HostTensor::f32({2}, {1, 1}), i8({2}, {0, 0}),
                                    HostTensor::f32({}, {1}), i8({}, {-1})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int8_t>() == std::vector<int8_t>{-1, 1, 1, -3, 63, 127, 127, -128});
}

TEST_CASE("quantize_conv ops refuse wrong dtypes and shapes naming them", "[ops][quantize_conv][errors]") {
  const HostTensor x = u8({1, 1, 2, 2}, {0, 0, 0, 0});
  const HostTensor w = u8({2, 1, 1, 1}, {0, 0});
  auto float_x = run_op("ConvInteger", {HostTensor::f32({1, 1, 2, 2}, {0, 0, 0, 0}), w});
  REQUIRE_FALSE(float_x.is_ok());
  CHECK_THAT(float_x.status().message(), Catch::Contains("x must be u8 or i8"));
  auto zp = run_op("ConvInteger", {x, w, u8({}, {0}), u8({3}, {0, 0, 0})});
  REQUIRE_FALSE(zp.is_ok());
  CHECK_THAT(zp.status().message(), Catch::Contains("w_zero_point must be one value or one per output channel [2]"));
  auto x_zp = run_op("ConvInteger", {x, w, u8({2}, {0, 0})});
  REQUIRE_FALSE(x_zp.is_ok());
  CHECK_THAT(x_zp.status().message(), Catch::Contains("x_zero_point must be one value"));
  const HostTensor one = HostTensor::f32({}, {1});
  auto bias = run_op("QLinearConv", {x, one, u8({}, {0}), w, one, u8({}, {0}), one, u8({}, {0}), HostTensor::i32({1}, {0})});
  REQUIRE_FALSE(bias.is_ok());
  CHECK_THAT(bias.status().message(), Catch::Contains("B must be i32 [2]"));
  auto groups = run_op("ConvInteger", {x, w}, Attrs{{"groups", int64_t{2}}});
  REQUIRE_FALSE(groups.is_ok());
  CHECK_THAT(groups.status().message(), Catch::Contains("groups 2 must divide input channels 1"));
}
