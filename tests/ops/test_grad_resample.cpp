// resample family gradients, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp): the transposed weights of every mode the U-Net / FPN decoders use.
#include <catch2/catch.hpp>

#include <string>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("Resize gradients match finite differences", "[ops][grad][resample][fd]") {
  const HostTensor x = HostTensor::f32({1, 2, 3, 4}, random_floats(24, 7));
  struct Case {
    const char* mode;
    const char* coordinates;
    std::vector<int64_t> sizes;
    std::vector<double> scales;
  };
  const std::vector<Case> cases = {
      {"nearest", "asymmetric", {1, 2, 6, 8}, {1, 1, 2, 2}},
      {"nearest", "half_pixel", {1, 2, 4, 3}, {1, 1, 4.0 / 3, 0.75}},
      {"linear", "half_pixel", {1, 2, 6, 8}, {1, 1, 2, 2}},
      {"linear", "align_corners", {1, 2, 5, 3}, {1, 1, 5.0 / 3, 0.75}},
      {"linear", "pytorch_half_pixel", {1, 2, 2, 7}, {1, 1, 2.0 / 3, 1.75}},
      {"cubic", "half_pixel", {1, 2, 6, 6}, {1, 1, 2, 1.5}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.mode << " " << c.coordinates) {
      const Attrs attrs{{"mode", std::string(c.mode)},
                        {"coordinate_transformation_mode", std::string(c.coordinates)},
                        {"sizes", c.sizes},
                        {"scales", c.scales}};
      CHECK(check_op_gradients("Resize", {x}, attrs, {true}));
    }
  }
}
