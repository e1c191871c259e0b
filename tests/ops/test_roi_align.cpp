// roi_align family: RoiAlign on a linear ramp (where bilinear samples are exact, so each bin's
// average is the ramp at the mean sample position, worked out by hand), max mode, and errors; the
// cpu RoiAlign and RoiAlignGrad (avg, max) against ref on random maps and regions.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
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

namespace {

// `count` regions on an h x w map (some reaching past its border, some tiny), in image units.
Operand random_rois(std::mt19937& gen, int64_t count, int64_t h, int64_t w) {
  std::uniform_real_distribution<float> along(-2.0f, 1.0f);
  std::vector<float> v;
  for (int64_t r = 0; r < count; ++r) {
    const float x1 = along(gen) * 0.5f + static_cast<float>(w) * std::uniform_real_distribution<float>(0, 0.8f)(gen);
    const float y1 = along(gen) * 0.5f + static_cast<float>(h) * std::uniform_real_distribution<float>(0, 0.8f)(gen);
    const float size = std::uniform_real_distribution<float>(0.1f, 1.2f)(gen);
    v.insert(v.end(), {x1, y1, x1 + size * static_cast<float>(w) * 0.6f, y1 + size * static_cast<float>(h) * 0.5f});
  }
  return values({count, 4}, v);
}

}  // namespace

TEST_CASE("cpu RoiAlign and RoiAlignGrad match ref on random maps, regions and modes", "[ops][cpu][roi_align]") {
  std::mt19937 gen(47);
  uint32_t seed = 100;
  for (const char* mode : {"avg", "max"}) {
    for (const char* coordinates : {"half_pixel", "output_half_pixel"}) {
      for (int trial = 0; trial < 3; ++trial) {
        const int64_t n = random_dim(gen, 1, 3), c = random_dim(gen, 1, 5), h = random_dim(gen, 2, 9), w = random_dim(gen, 2, 9);
        const int64_t regions = random_dim(gen, 1, 5), out_h = random_dim(gen, 1, 3), out_w = random_dim(gen, 1, 3);
        std::vector<int64_t> batch(static_cast<size_t>(regions));
        for (int64_t& b : batch) b = random_dim(gen, 0, n - 1);
        Attrs attrs = roi_attrs(mode, coordinates, out_h, trial);  // sampling_ratio 0 (adaptive), 1, 2
        attrs.set("output_width", out_w);
        attrs.set("spatial_scale", trial == 2 ? 0.5 : 1.0);
        const Operand rois = random_rois(gen, regions, h, w);
        INFO(mode << " " << coordinates << " x [" << n << ", " << c << ", " << h << ", " << w << "] regions " << regions);
        check_against_ref("cpu", {"RoiAlign", {input({n, c, h, w}, ++seed), rois, int64s({regions}, batch)}, attrs});
        check_against_ref("cpu", {"RoiAlignGrad", {input({regions, c, out_h, out_w}, ++seed), input({n, c, h, w}, ++seed), rois,
                                                   int64s({regions}, batch)},
                                  attrs});
      }
    }
    // Many channels and regions, split over threads (a tile's channels cross regions).
    const Operand rois = random_rois(gen, 7, 20, 24);
    const Operand batch = int64s({7}, {0, 1, 1, 0, 1, 0, 0});
    const Attrs attrs = roi_attrs(mode, "half_pixel", 3, 0);
    check_against_ref("cpu", {"RoiAlign", {input({2, 37, 20, 24}, ++seed), rois, batch}, attrs}, "", 4);
    check_against_ref("cpu", {"RoiAlignGrad", {input({7, 37, 3, 3}, ++seed), input({2, 37, 20, 24}, ++seed), rois, batch}, attrs},
                      "", 4);
  }
}

TEST_CASE("cpu RoiAlign refuses a batch index out of range, naming it", "[ops][cpu][roi_align][errors]") {
  const OpCase c{"RoiAlign", {input({1, 2, 4, 4}, 1), values({1, 4}, {0, 0, 3, 3}), int64s({1}, {1})}, {}};
  BoundCase bound = BoundCase::open(c, "cpu");
  REQUIRE(bound.backend_of(c.op) == "cpu");
  const Status s = bound.try_infer();
  REQUIRE_FALSE(s.is_ok());
  CHECK_THAT(s.message(), Catch::Contains("batch_indices[0] = 1 is out of range [0, 1)"));
}
