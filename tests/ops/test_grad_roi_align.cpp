// roi_align family gradient, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp): regions inside, across the border and overlapping; avg and max.
#include <catch2/catch.hpp>

#include <string>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("RoiAlign gradients match finite differences", "[ops][grad][roi_align][fd]") {
  const HostTensor x = HostTensor::f32({2, 2, 5, 6}, random_floats(120, 9));
  const HostTensor rois = HostTensor::f32({3, 4}, {0.5f, 1.0f, 4.2f, 3.7f, -1.0f, 2.0f, 6.5f, 5.5f, 1.0f, 0.0f, 2.5f, 4.0f});
  const HostTensor batch = HostTensor::i64({3}, {1, 0, 1});
  for (const char* coordinates : {"half_pixel", "output_half_pixel"}) {
    for (int64_t ratio : {0, 2}) {
      DYNAMIC_SECTION(coordinates << " sampling_ratio " << ratio) {
        const Attrs attrs{{"coordinate_transformation_mode", std::string(coordinates)},
                          {"output_height", int64_t{2}},
                          {"output_width", int64_t{3}},
                          {"sampling_ratio", ratio},
                          {"spatial_scale", 0.9}};
        CHECK(check_op_gradients("RoiAlign", {x, rois, batch}, attrs, {true, false, false}));
      }
    }
  }
}

TEST_CASE("RoiAlign max gradients match finite differences", "[ops][grad][roi_align][fd]") {
  // A map of distinct values spaced far more than the step apart (a permutation of 0..n-1, scaled),
  // so that no bin's winning corner changes within +-h: max is differentiable there.
  std::vector<float> v(120);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % v.size()) * 0.1f - 6.0f;
  const HostTensor x = HostTensor::f32({2, 2, 5, 6}, v);
  const HostTensor rois = HostTensor::f32({3, 4}, {0.5f, 1.0f, 4.2f, 3.7f, -1.0f, 2.0f, 6.5f, 5.5f, 1.0f, 0.0f, 2.5f, 4.0f});
  const HostTensor batch = HostTensor::i64({3}, {1, 0, 1});
  for (const char* coordinates : {"half_pixel", "output_half_pixel"}) {
    for (int64_t ratio : {0, 2}) {
      DYNAMIC_SECTION(coordinates << " sampling_ratio " << ratio) {
        const Attrs attrs{{"mode", std::string("max")},
                          {"coordinate_transformation_mode", std::string(coordinates)},
                          {"output_height", int64_t{2}},
                          {"output_width", int64_t{3}},
                          {"sampling_ratio", ratio},
                          {"spatial_scale", 0.9}};
        GradCheckOptions options;
        options.step = 1e-3;
        CHECK(check_op_gradients("RoiAlign", {x, rois, batch}, attrs, {true, false, false}, options));
      }
    }
  }
}
