// roi_align family: RoiAlign on a linear ramp (where bilinear samples are exact, so each bin's
// average is the ramp at the mean sample position, worked out by hand), max mode, and errors.
#include <catch2/catch.hpp>

#include <string>

#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor ramp() {  // value 4 y + x on a 4 x 4 map
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return HostTensor::f32({1, 1, 4, 4}, v);
}

Attrs roi_attrs(const char* mode, const char* coordinates, int64_t out, int64_t ratio) {
  return {{"mode", std::string(mode)},
          {"coordinate_transformation_mode", std::string(coordinates)},
          {"output_height", out},
          {"output_width", out},
          {"sampling_ratio", ratio}};
}

}  // namespace

TEST_CASE("RoiAlign averages bilinear samples per bin", "[ops][roi_align]") {
  // Two regions on a batch of two maps (the second map is the first plus 100).
  std::vector<float> two = ramp().f32();
  for (int i = 0; i < 16; ++i) two.push_back(100.0f + static_cast<float>(i));
  auto y = run_op("RoiAlign",
                  {HostTensor::f32({2, 1, 4, 4}, two), HostTensor::f32({2, 4}, {0, 0, 3, 3, 0, 0, 3, 3}), HostTensor::i64({2}, {0, 1})},
                  roi_attrs("avg", "output_half_pixel", 2, 2));
  REQUIRE(y.is_ok());
  CHECK(y.value()[0].shape == Shape{2, 1, 2, 2});
  // Samples at 0.375 and 1.125 (bin 0) and at 1.875 and 2.625 (bin 1) on each axis.
  const std::vector<float> want = {3.75f, 5.25f, 9.75f, 11.25f, 103.75f, 105.25f, 109.75f, 111.25f};
  const std::vector<float> got = y.value()[0].f32();
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]));
}

TEST_CASE("RoiAlign max takes the largest weighted corner of any sample", "[ops][roi_align]") {
  // One sample at (1.5, 1.5): corners 5, 6, 9, 10, each weighted 1/4.
  auto y = run_op("RoiAlign", {ramp(), HostTensor::f32({1, 4}, {0, 0, 3, 3}), HostTensor::i32({1}, {0})},
                  roi_attrs("max", "output_half_pixel", 1, 1));
  REQUIRE(y.is_ok());
  CHECK(y.value()[0].f32()[0] == Approx(2.5f));
}

TEST_CASE("roi_align shape inference and errors", "[ops][roi_align][errors]") {
  const TensorType batch{DType::kI64, {3}};
  auto shape = infer("RoiAlign", {f32({2, 5, 8, 8}), f32({3, 4}), batch}, {{"output_height", int64_t{2}}, {"output_width", int64_t{3}}});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0].shape == Shape{3, 5, 2, 3});
  CHECK_FALSE(infer("RoiAlign", {f32({2, 5, 8, 8}), f32({3, 5}), batch}, {}).is_ok());                    // rois [R, 5]
  CHECK_FALSE(infer("RoiAlign", {f32({2, 5, 8, 8}), f32({3, 4}), TensorType{DType::kI64, {2}}}, {}).is_ok());
  CHECK_FALSE(infer("RoiAlign", {f32({2, 5, 8, 8}), f32({3, 4}), batch}, {{"mode", std::string("sum")}}).is_ok());
  auto bad = run_op("RoiAlign", {ramp(), HostTensor::f32({1, 4}, {0, 0, 3, 3}), HostTensor::i64({1}, {1})}, {});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("batch_indices[0] = 1") != std::string::npos);
}
