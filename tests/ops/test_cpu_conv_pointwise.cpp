// The cpu backend's direct 1x1 tiles (kernels/cpu/conv_pointwise.cpp) against ref: the forward
// with and without a bias, each fused activation, a frozen and a trainable weight, and the input
// gradient, on shapes that leave ragged row blocks (output channels not a multiple of 6), ragged
// pixels (planes not a multiple of 16), several 64-pixel tasks per image, planes smaller than one
// tile, and planes whose input is staged (rows 2 KB apart); one and two threads. The rule's choice is checked by the count of kernels made.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "ir/conv_algorithm.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/short_product.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::conv_pointwise_testing::kernels_made;

namespace {

ConvShape pointwise(int64_t batch, int64_t channels, int64_t h, int64_t w, int64_t out_channels) {
  return {batch, channels, h, w, out_channels, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}};
}

OpCase named_pointwise(OpCase c) {
  c.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(ConvAlgorithm::kPointwise)));
  return c;
}

OpCase without_bias(OpCase c) {
  c.inputs.pop_back();
  return c;
}

// Runs `c` against ref and requires that it went through the direct tiles.
void check_tiles(const OpCase& c, int threads) {
  const int before = kernels_made();
  check_against_ref("cpu", c, "cpu", threads);
  CHECK(kernels_made() == before + 1);
}

}  // namespace

TEST_CASE("cpu 1x1 direct tiles: Conv2d forward matches ref", "[ops][cpu][conv][pointwise]") {
  uint32_t seed = 7300;
  const ConvShape shapes[] = {
      pointwise(2, 16, 6, 5, 8),    // 30 pixels: one tile and 14 ragged; 6 + 2 rows
      pointwise(3, 5, 8, 9, 13),    // 72 pixels: two tasks per image; 6 + 6 + 1 rows
      pointwise(2, 24, 16, 16, 36), // MobileNetV2-like: 256 pixels, whole tiles only
      pointwise(2, 7, 3, 3, 11),    // 9 pixels: no whole tile at all
      pointwise(1, 40, 4, 4, 5),    // one image, one tile
      pointwise(2, 12, 16, 32, 50), // rows 2 KB apart, 8+ row blocks: the input staged per task
  };
  for (int threads : {1, 2}) {
    for (const ConvShape& s : shapes) {
      for (const char* activation : {"none", "relu", "relu6"}) {
        check_tiles(named_pointwise(conv_forward_case(s, true, activation, seed += 3)), threads);
        check_tiles(named_pointwise(conv_forward_case(s, false, activation, seed += 3)), threads);
      }
      check_tiles(named_pointwise(without_bias(conv_forward_case(s, false, "relu6", seed += 3))), threads);
    }
  }
}

TEST_CASE("cpu 1x1 direct tiles: Conv2dGradInput matches ref", "[ops][cpu][grad][conv][pointwise]") {
  uint32_t seed = 7400;
  for (int threads : {1, 2}) {
    for (const ConvShape& s : {pointwise(2, 8, 6, 5, 16), pointwise(3, 13, 8, 9, 5), pointwise(2, 36, 16, 16, 24),
                               pointwise(2, 11, 3, 3, 7), pointwise(1, 5, 4, 4, 40),
                               pointwise(1, 49, 32, 16, 10)}) {  // staged: 49 rows over 10, 2 KB apart
      check_tiles(named_pointwise(grad_input_case(s, false, seed += 2)), threads);
      check_tiles(named_pointwise(grad_input_case(s, true, seed += 2)), threads);
    }
  }
}

TEST_CASE("cpu 1x1 direct tiles: a NaN or infinity in the input reaches the outputs that read it",
          "[ops][cpu][conv][pointwise]") {
  OpCase c = named_pointwise(conv_forward_case(pointwise(1, 4, 4, 5, 7), false, "relu6", 7500));
  c.inputs[0].values[3] = std::numeric_limits<float>::quiet_NaN();                 // channel 0, pixel 3
  c.inputs[0].values[20 + 17] = std::numeric_limits<float>::infinity();            // channel 1, pixel 17
  check_tiles(c, 1);  // NaN must stay NaN through relu6; the infinities clamp to 0 or 6 as in ref
}

TEST_CASE("cpu 1x1 rule: short reductions take the direct tiles, deep ones sgemm", "[ops][cpu][conv][pointwise]") {
  const int64_t deep = cpu::kShortProductMaxDepth + 1;
  int before = kernels_made();
  check_against_ref("cpu", conv_forward_case(pointwise(2, cpu::kShortProductMaxDepth, 8, 8, 24), false, "relu6", 7600),
                    "cpu");
  CHECK(kernels_made() == before + 1);
  before = kernels_made();
  check_against_ref("cpu", grad_input_case(pointwise(2, 96, 8, 8, cpu::kShortProductMaxDepth), false, 7601), "cpu");
  CHECK(kernels_made() == before + 1);
  before = kernels_made();
  check_against_ref("cpu", conv_forward_case(pointwise(2, deep, 8, 8, 24), false, "none", 7602), "cpu");
  check_against_ref("cpu", grad_input_case(pointwise(2, 24, 8, 8, deep), false, 7603), "cpu");
  check_against_ref("cpu", conv_forward_case(pointwise(2, 16, 3, 3, 24), false, "none", 7604), "cpu");  // < one tile
  CHECK(kernels_made() == before);
}

TEST_CASE("cpu im2col with a short reduction runs the direct tiles on the unfolded columns",
          "[ops][cpu][conv][pointwise]") {
  // MobileNet-like stems: 3x3 stride 2 on 3 channels (27 rows), 5x5 on 2 (50 rows); output planes
  // of 100 and 64+ pixels with ragged tiles, one image each so that the batched GEMM is not taken;
  // and a 32x16 output plane (2 KB rows), whose unfolded rows get a padded stride.
  uint32_t seed = 7700;
  const ConvShape stems[] = {{1, 3, 20, 20, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},
                             {1, 2, 13, 14, 7, 5, 5, 1, {1, 1}, {2, 2, 2, 2}, {1, 1}},
                             {2, 3, 64, 32, 13, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}}};
  for (int threads : {1, 2}) {
    for (const ConvShape& s : stems) {
      for (bool frozen_weight : {false, true}) {
        OpCase c = conv_forward_case(s, frozen_weight, "relu6", seed += 3);
        c.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(ConvAlgorithm::kIm2col)));
        check_against_ref("cpu", c, "cpu", threads);
      }
    }
  }
}
