// grid_sample family gradients, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp), with respect to both the input and the grid.
#include <catch2/catch.hpp>

#include <string>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// The grid coordinate in [-1, 1] that maps to source pixel coordinate s on an axis of `size`.
float grid_coordinate(double s, int64_t size, bool align_corners) {
  return static_cast<float>(align_corners ? 2 * s / static_cast<double>(size - 1) - 1
                                          : (2 * s + 1) / static_cast<double>(size) - 1);
}

// Source points with fractions 0.2-0.3 away from pixel centres, half-pixels and the borders (where
// sampling has kinks), inside and outside a 3 x 4 input.
HostTensor grid_for(bool align_corners) {
  const double xs[] = {-0.3, 0.3, 1.7, 2.3, 3.3, 0.7};
  const double ys[] = {0.7, 1.3, 2.3, -0.7, 1.8, 0.2};
  std::vector<float> g;
  for (int i = 0; i < 6; ++i) {
    g.push_back(grid_coordinate(xs[i], 4, align_corners));
    g.push_back(grid_coordinate(ys[i], 3, align_corners));
  }
  return HostTensor::f32({1, 2, 3, 2}, g);
}

}  // namespace

TEST_CASE("GridSample gradients match finite differences", "[ops][grad][grid_sample][fd]") {
  const HostTensor x = HostTensor::f32({1, 2, 3, 4}, random_floats(24, 11));
  for (const char* padding : {"zeros", "border", "reflection"}) {
    for (int64_t align : {0, 1}) {
      DYNAMIC_SECTION("bilinear " << padding << " align_corners " << align) {
        const Attrs attrs{{"mode", std::string("bilinear")}, {"padding_mode", std::string(padding)}, {"align_corners", align}};
        CHECK(check_op_gradients("GridSample", {x, grid_for(align != 0)}, attrs, {true, true}));
      }
    }
  }
  for (const char* padding : {"zeros", "border", "reflection"}) {
    for (int64_t align : {0, 1}) {
      DYNAMIC_SECTION("bicubic " << padding << " align_corners " << align) {
        const Attrs attrs{{"mode", std::string("bicubic")}, {"padding_mode", std::string(padding)}, {"align_corners", align}};
        CHECK(check_op_gradients("GridSample", {x, grid_for(align != 0)}, attrs, {true, true}));
      }
    }
  }
  SECTION("nearest") {
    const Attrs attrs{{"mode", std::string("nearest")}, {"padding_mode", std::string("zeros")}};
    CHECK(check_op_gradients("GridSample", {x, grid_for(false)}, attrs, {true, true}));
  }
}
