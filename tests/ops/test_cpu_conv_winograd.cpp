// Conv2d and Conv2dGradInput through the cpu backend's own Winograd F(4x4,3x3)
// (kernels/cpu/conv_winograd.cpp) against the reference kernel. The choice is forced to Winograd
// whatever the speed rule says, and the count of Winograd kernels made checks that each case
// really ran it. Shapes: ResNet-18's 3x3 layers at 128x128 (batch 1 and 8), odd planes (ragged
// 4x4 tiles), planes smaller than one tile, padding 0, 1, 2 and asymmetric, a bias and fused
// activations, frozen weights (transformed once at prepare, or per run when the transform is
// large) and trainable ones, one and two threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/conv_winograd.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::conv_winograd_testing::Choice;

namespace {

// Restores the default however a test case ends.
struct ForceChoice {
  explicit ForceChoice(Choice c) : before(cpu::conv_winograd_testing::choice()) {
    cpu::conv_winograd_testing::set_choice(c);
  }
  ~ForceChoice() { cpu::conv_winograd_testing::set_choice(before); }
  Choice before;
};

// Relative to |ref| + 1 (compare_results), for sums of C * 9 products of values in [-1, 1): 3e-4
// for sums of up to 256 * 9 products, with room over oneDNN's Winograd (1.2e-4 worst on
// ResNet-18's layers, tests/ops/test_cpu_conv_dnnl.cpp) and over ours (below); beyond, the
// bound grows with the square root of the sum's length, as a sum of independent rounding errors
// does (4.2e-4 at 512 channels, where 3.4e-4 was seen). Why Winograd loses a digit: the input
// transform's rows sum to 7 in absolute value and the output's reach 8, so each transformed
// element is several times the inputs, and the rounding errors of those large intermediates
// survive the cancellation that brings the result back to the size of a direct sum (an f32
// simulation of the 256-channel layer gave 1.4e-4 over 32768 outputs). Direct kernels: 2e-5.
double winograd_tolerance(int64_t channels) {
  return 3e-4 * std::sqrt(std::max<double>(1.0, static_cast<double>(channels) / 256.0));
}

// Runs `c` on cpu with Winograd forced and on ref; requires that Winograd ran it. `channels`:
// the channels each output sums over.
void check(OpCase c, int threads, int64_t channels) {
  INFO(c.op << " threads " << threads);
  c.tolerance = winograd_tolerance(channels);
  ForceChoice force(Choice::kAlways);
  const int before = cpu::conv_winograd_testing::kernels_made();
  check_against_ref("cpu", c, "cpu", threads);
  CHECK(cpu::conv_winograd_testing::kernels_made() > before);
}

ConvShape same_3x3(int64_t batch, int64_t channels, int64_t h, int64_t w, int64_t out_channels) {
  return ConvShape{batch, channels, h, w, out_channels, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
}

ConvShape padded_3x3(int64_t channels, int64_t h, int64_t w, int64_t out_channels, Ints pads) {
  return ConvShape{2, channels, h, w, out_channels, 3, 3, 1, {1, 1}, pads, {1, 1}};
}

const std::vector<ConvShape>& small_shapes() {
  static const std::vector<ConvShape> s = {
      same_3x3(2, 16, 8, 8, 16),                      // whole 4x4 tiles
      same_3x3(3, 24, 9, 7, 40),                      // odd plane: ragged tiles
      same_3x3(2, 64, 5, 6, 32),                      // fewer outputs than one tile row
      same_3x3(1, 3, 11, 13, 8),                      // 3 input channels
      same_3x3(1, 8, 2, 3, 8),                        // a plane smaller than one tile
      same_3x3(2, 8, 7, 70, 8),                       // 18 tiles per row: two calls of 16 tiles
      padded_3x3(16, 10, 9, 16, {0, 1, 2, 0}),        // asymmetric padding
      padded_3x3(16, 7, 7, 32, {0, 0, 0, 0}),         // no padding (the input gradient pads 2)
      padded_3x3(8, 6, 5, 8, {2, 2, 2, 2}),           // padding 2 (the input gradient pads 0)
  };
  return s;
}

// ResNet-18's 3x3 stride-1 layers at 128x128.
const std::vector<ConvShape>& resnet_shapes(int64_t batch) {
  static const std::vector<ConvShape> one = {same_3x3(1, 64, 32, 32, 64), same_3x3(1, 128, 16, 16, 128),
                                             same_3x3(1, 256, 8, 8, 256), same_3x3(1, 512, 4, 4, 512)};
  static const std::vector<ConvShape> eight = {same_3x3(8, 64, 32, 32, 64), same_3x3(8, 128, 16, 16, 128),
                                               same_3x3(8, 256, 8, 8, 256)};
  return batch == 1 ? one : eight;
}

}  // namespace

TEST_CASE("cpu Conv2d through Winograd matches ref on odd shapes", "[ops][cpu][conv][winograd]") {
  uint32_t seed = 8100;
  for (const ConvShape& s : small_shapes()) {
    check(conv_forward_case(s, true, "relu6", seed += 3), 1, s.channels);
    check(conv_forward_case(s, false, "none", seed += 3), 1, s.channels);
    check(conv_forward_case(s, false, "relu", seed += 3), 2, s.channels);
  }
}

TEST_CASE("cpu Conv2dGradInput through Winograd matches ref on odd shapes", "[ops][cpu][grad][conv][winograd]") {
  uint32_t seed = 8200;
  for (const ConvShape& s : small_shapes()) {
    check(grad_input_case(s, true, seed += 2), 1, s.out_channels);
    check(grad_input_case(s, false, seed += 2), 1, s.out_channels);
    check(grad_input_case(s, false, seed += 2), 2, s.out_channels);
  }
}

TEST_CASE("cpu Winograd matches ref on ResNet-18's layers, batch 1 and 8", "[ops][cpu][conv][winograd]") {
  uint32_t seed = 8300;
  for (int64_t batch : {1, 8}) {
    for (const ConvShape& s : resnet_shapes(batch)) {
      INFO("batch " << batch << " channels " << s.channels << " plane " << s.height);
      // Frozen 64 and 128 channels keep their transform from prepare; 256 and 512 make it per run.
      check(conv_forward_case(s, true, "none", seed += 3), batch == 1 ? 2 : 1, s.channels);
      check(conv_forward_case(s, false, "relu", seed += 3), 1, s.channels);
      check(grad_input_case(s, true, seed += 2), 1, s.out_channels);
      check(grad_input_case(s, false, seed += 2), batch == 1 ? 2 : 1, s.out_channels);
    }
  }
}

TEST_CASE("cpu Winograd declines what it cannot run", "[ops][cpu][conv][winograd]") {
  ForceChoice force(Choice::kAlways);
  const int before = cpu::conv_winograd_testing::kernels_made();
  const ConvShape strided{2, 16, 9, 9, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}};
  const ConvShape dilated{2, 16, 9, 9, 16, 3, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}};
  const ConvShape grouped{2, 16, 9, 9, 16, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  const ConvShape five{2, 16, 9, 9, 16, 5, 5, 1, {1, 1}, {2, 2, 2, 2}, {1, 1}};
  const ConvShape wide_pad = padded_3x3(8, 6, 6, 8, {3, 3, 3, 3});
  uint32_t seed = 8400;
  for (const ConvShape& s : {strided, dilated, grouped, five, wide_pad}) {
    check_against_ref("cpu", conv_forward_case(s, false, "none", seed += 3));
    check_against_ref("cpu", grad_input_case(s, false, seed += 2));
  }
  CHECK(cpu::conv_winograd_testing::kernels_made() == before);
}
