// Conv2d and Conv2dGradInput through oneDNN (kernels/cpu/conv_dnnl.cpp) against the reference
// kernel: the choice is forced to Winograd or to oneDNN's direct kernels whatever the speed rule
// says, and the count of oneDNN kernels made checks that each case really ran the forced one.
// Shapes: odd plane sizes (partial 4x4 Winograd tiles), padding 1 and asymmetric padding, batch > 1,
// channel counts that are not multiples of 16, a bias and fused activations, frozen and trainable
// weights, one and two threads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cpu/conv_dnnl.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::DnnlConvAlgorithm;
using pock::cpu::conv_dnnl_testing::Choice;

namespace {

// Restores the default (oneDNN off) however a test case ends.
struct ForceChoice {
  explicit ForceChoice(Choice c) { cpu::conv_dnnl_testing::set_choice(c); }
  ~ForceChoice() { cpu::conv_dnnl_testing::set_choice(Choice::kNever); }
};

// Tolerances, relative to |ref| + 1 (compare_results), for sums of C * 9 products of values in
// [-1, 1). Direct kernels only sum in another order than ref. Winograd F(4x4,3x3) multiplies
// transformed tiles whose entries reach several times the inputs (the transform matrices hold 4,
// 5 and 8) and transforms the sums back: about one decimal digit lost. Worst errors against a
// double-precision sum, measured with oneDNN 2.6.3 on AVX-512 (forward / input gradient):
//   the shapes below:                 direct 3.3e-6,   Winograd 2.3e-5
//   ResNet-18's layers (C*9 <= 4608): direct 1.4e-5,   Winograd 1.2e-4
constexpr double kDirectTolerance = 2e-5;
constexpr double kWinogradTolerance = 2e-4;

// oneDNN's kernels need AVX-512 (Winograd) or AVX2 (direct); where the CPU lacks it oneDNN has no
// kernel and the op goes another way, which is not what these tests check.
bool dnnl_can_run(DnnlConvAlgorithm algorithm) {
#ifdef POCK_HAVE_DNNL
  return algorithm == DnnlConvAlgorithm::kWinograd ? __builtin_cpu_supports("avx512f")
                                                    : __builtin_cpu_supports("avx2");
#else
  (void)algorithm;
  return false;
#endif
}

const char* name(DnnlConvAlgorithm a) { return a == DnnlConvAlgorithm::kWinograd ? "Winograd" : "direct"; }

// oneDNN's Winograd takes only symmetric padding of at most 1; it declines the rest, which then
// go the backend's other ways (checked against ref all the same).
bool winograd_takes(const ConvShape& s) {
  return s.pads[0] == s.pads[2] && s.pads[1] == s.pads[3] && s.pads[0] <= 1 && s.pads[1] <= 1;
}

// Runs `c` on cpu with `algorithm` forced and on ref; requires that oneDNN ran it where it takes
// the shape.
void check(DnnlConvAlgorithm algorithm, const ConvShape& s, OpCase c, int threads) {
  INFO(name(algorithm) << " threads " << threads);
  c.tolerance = algorithm == DnnlConvAlgorithm::kWinograd ? kWinogradTolerance : kDirectTolerance;
  ForceChoice force(algorithm == DnnlConvAlgorithm::kWinograd ? Choice::kWinograd : Choice::kDirect);
  const int before = cpu::conv_dnnl_testing::kernels_made(algorithm);
  check_against_ref("cpu", c, "cpu", threads);
  const bool taken = algorithm == DnnlConvAlgorithm::kDirect || winograd_takes(s);
  CHECK((cpu::conv_dnnl_testing::kernels_made(algorithm) > before) == taken);
}

ConvShape same_3x3(int64_t batch, int64_t channels, int64_t h, int64_t w, int64_t out_channels) {
  return ConvShape{batch, channels, h, w, out_channels, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
}

const std::vector<ConvShape>& shapes() {
  static const std::vector<ConvShape> s = {
      same_3x3(2, 16, 8, 8, 16),    // whole 4x4 tiles
      same_3x3(3, 24, 9, 7, 40),    // odd plane: partial tiles; channels not multiples of 16
      same_3x3(2, 64, 5, 6, 32),    // fewer outputs than one tile row
      same_3x3(1, 3, 11, 13, 8),    // 3 input channels
      ConvShape{2, 16, 10, 9, 16, 3, 3, 1, {1, 1}, {0, 1, 2, 0}, {1, 1}},  // asymmetric: Winograd declines
      ConvShape{2, 16, 7, 7, 32, 3, 3, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},   // no padding
  };
  return s;
}

}  // namespace

TEST_CASE("cpu Conv2d through oneDNN (Winograd, direct) matches ref", "[ops][cpu][conv][dnnl]") {
  uint32_t seed = 7100;
  for (DnnlConvAlgorithm algorithm : {DnnlConvAlgorithm::kWinograd, DnnlConvAlgorithm::kDirect}) {
    if (!dnnl_can_run(algorithm)) {
      WARN("skipped " << name(algorithm) << ": no oneDNN in this build or the CPU lacks its ISA");
      continue;
    }
    for (const ConvShape& s : shapes()) {
      for (bool frozen_weight : {true, false}) {
        const char* activation = frozen_weight ? "relu6" : "none";
        check(algorithm, s, conv_forward_case(s, frozen_weight, activation, seed += 3), 1);
      }
      check(algorithm, s, conv_forward_case(s, false, "relu", seed += 3), 2);
    }
  }
}

TEST_CASE("cpu Conv2dGradInput through oneDNN (Winograd, direct) matches ref", "[ops][cpu][grad][conv][dnnl]") {
  uint32_t seed = 7200;
  for (DnnlConvAlgorithm algorithm : {DnnlConvAlgorithm::kWinograd, DnnlConvAlgorithm::kDirect}) {
    if (!dnnl_can_run(algorithm)) {
      WARN("skipped " << name(algorithm) << ": no oneDNN in this build or the CPU lacks its ISA");
      continue;
    }
    for (const ConvShape& s : shapes()) {
      for (bool frozen_weight : {true, false}) check(algorithm, s, grad_input_case(s, frozen_weight, seed += 2), 1);
      check(algorithm, s, grad_input_case(s, false, seed += 2), 2);
    }
  }
}

TEST_CASE("cpu Conv2d and Conv2dGradInput by rule: oneDNN Winograd on ResNet-sized 3x3 layers only",
          "[ops][cpu][conv][dnnl]") {
  if (!dnnl_can_run(DnnlConvAlgorithm::kWinograd)) {
    WARN("skipped: no oneDNN in this build or the CPU lacks AVX-512");
    return;
  }
  ForceChoice by_rule(Choice::kByRule);
  const ConvShape resnet = same_3x3(2, 64, 8, 8, 64);    // 8x8 output: Winograd by rule
  const ConvShape late = same_3x3(2, 64, 4, 4, 64);      // 4x4 output: direct by rule
  const ConvShape narrow = same_3x3(2, 16, 8, 8, 16);    // under 64 channels: not oneDNN
  const auto made = [](DnnlConvAlgorithm a) { return cpu::conv_dnnl_testing::kernels_made(a); };
  const int winograd = made(DnnlConvAlgorithm::kWinograd), direct = made(DnnlConvAlgorithm::kDirect);
  OpCase c = conv_forward_case(resnet, true, "none", 7301);
  c.tolerance = kWinogradTolerance;
  check_against_ref("cpu", c);
  OpCase g = grad_input_case(resnet, false, 7303);
  g.tolerance = kWinogradTolerance;
  check_against_ref("cpu", g);
  CHECK(made(DnnlConvAlgorithm::kWinograd) == winograd + 2);
  check_against_ref("cpu", conv_forward_case(late, false, "none", 7305));
  CHECK(made(DnnlConvAlgorithm::kDirect) == direct + 1);
  check_against_ref("cpu", conv_forward_case(narrow, false, "none", 7307));
  check_against_ref("cpu", grad_input_case(narrow, true, 7309));
  CHECK(made(DnnlConvAlgorithm::kWinograd) == winograd + 2);
  CHECK(made(DnnlConvAlgorithm::kDirect) == direct + 1);
}

// Without POCK_CPU_CONV the way is off; with POCK_CPU_CONV=onednn (the ctest entry "cpu conv:
// POCK_CPU_CONV=onednn ..." runs this case so) the rule applies from load on.
TEST_CASE("cpu Conv2d: oneDNN is off by default (its runs allocate) and on with POCK_CPU_CONV=onednn",
          "[ops][cpu][conv][dnnl]") {
  const char* env = std::getenv("POCK_CPU_CONV");
  const bool opted_in = env && std::string(env) == "onednn" && dnnl_can_run(DnnlConvAlgorithm::kWinograd);
  const ConvShape resnet = same_3x3(2, 64, 8, 8, 64);
  const int winograd = cpu::conv_dnnl_testing::kernels_made(DnnlConvAlgorithm::kWinograd);
  check_against_ref("cpu", conv_forward_case(resnet, true, "none", 7311));
  CHECK(cpu::conv_dnnl_testing::kernels_made(DnnlConvAlgorithm::kWinograd) == winograd + (opted_in ? 1 : 0));
}
