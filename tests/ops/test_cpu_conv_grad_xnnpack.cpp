// Conv2dGradInput with a frozen weight through XNNPACK's deconvolution (kernels/cpu/
// conv_grad_xnnpack.cpp) against the reference kernel: the choice is forced to the deconvolution
// whatever the speed rule says, and the count of deconvolution kernels made checks that each case
// really ran it. Shapes cover what the weight repack, the output padding and the adjustment (the
// forward input rows no window reached) must get right.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_grad_xnnpack.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::conv_grad_xnnpack_testing::Choice;

namespace {

// Restores the speed rule however a test case ends.
struct ForceChoice {
  explicit ForceChoice(Choice c) { cpu::conv_grad_xnnpack_testing::set_choice(c); }
  ~ForceChoice() { cpu::conv_grad_xnnpack_testing::set_choice(Choice::kByRule); }
};

// The rows (or columns) of the forward input that no window reached.
int64_t adjustment(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t stride, int64_t dilation) {
  return (in + pad_a + pad_b - dilation * (k - 1) - 1) % stride;
}

std::string shape_text(const ConvShape& s) {
  std::string t = "x " + shape_str(s.x()) + " w " + shape_str(s.w()) + " groups " + std::to_string(s.groups) +
                  " strides " + std::to_string(s.strides[0]) + "," + std::to_string(s.strides[1]) + " pads";
  for (int64_t p : s.pads) t += " " + std::to_string(p);
  t += " dilations " + std::to_string(s.dilations[0]) + "," + std::to_string(s.dilations[1]);
  return t;
}

// Runs the case on cpu (deconvolution forced) and on ref; true when the deconvolution ran it.
bool check_deconv(const ConvShape& s, uint32_t seed, int num_threads = 0) {
  INFO(shape_text(s));
  const int before = cpu::conv_grad_xnnpack_testing::kernels_made();
  check_against_ref("cpu", grad_input_case(s, /*frozen_weight=*/true, seed), "cpu", num_threads);
  return cpu::conv_grad_xnnpack_testing::kernels_made() > before;
}

}  // namespace

TEST_CASE("cpu Conv2dGradInput by XNNPACK deconvolution matches ref on random frozen convolutions",
          "[ops][cpu][grad][xnnpack]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("skipped: this build has no XNNPACK (POCK_WITH_XNNPACK off or xnn_initialize failed)");
    return;
  }
  ForceChoice force(Choice::kAlways);
  std::mt19937 gen(61);
  uint32_t seed = 6100;
  int adjusted = 0, grouped = 0, dilated = 0, asymmetric = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t kernel = std::vector<int64_t>{1, 3, 7}[static_cast<size_t>(random_dim(gen, 0, 2))];
    const int64_t groups = trial % 4 == 3 ? 2 : 1;
    const int64_t channels = groups * random_dim(gen, 1, 5), out_channels = groups * random_dim(gen, 1, 6);
    const int64_t stride_h = random_dim(gen, 1, 2), stride_w = random_dim(gen, 1, 2);
    const int64_t dilation = kernel > 1 && trial % 5 == 0 ? 2 : 1;
    const int64_t span = dilation * (kernel - 1) + 1;
    const Ints pads{random_dim(gen, 0, kernel / 2 + 1), random_dim(gen, 0, kernel / 2 + 1),
                    random_dim(gen, 0, kernel / 2), random_dim(gen, 0, kernel / 2)};
    // Large enough for one window after padding.
    const int64_t h = std::max<int64_t>(span - pads[0] - pads[2], 1) + random_dim(gen, 0, 9);
    const int64_t w = std::max<int64_t>(span - pads[1] - pads[3], 1) + random_dim(gen, 0, 9);
    const ConvShape s{random_dim(gen, 1, 3), channels, h, w, out_channels, kernel, kernel, groups,
                      {stride_h, stride_w}, pads, {dilation, dilation}};
    REQUIRE(check_deconv(s, seed += 2));
    adjusted += adjustment(h, pads[0], pads[2], kernel, stride_h, dilation) != 0 ||
                adjustment(w, pads[1], pads[3], kernel, stride_w, dilation) != 0;
    grouped += groups > 1;
    dilated += dilation > 1;
    asymmetric += pads[0] != pads[2] || pads[1] != pads[3];
  }
  // The random draw must have covered what the deconvolution can get wrong.
  CHECK(adjusted > 0);
  CHECK(grouped > 0);
  CHECK(dilated > 0);
  CHECK(asymmetric > 0);
}

TEST_CASE("cpu Conv2dGradInput by XNNPACK deconvolution: ResNet-like layers, adjustment, one thread",
          "[ops][cpu][grad][xnnpack]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("skipped: this build has no XNNPACK (POCK_WITH_XNNPACK off or xnn_initialize failed)");
    return;
  }
  ForceChoice force(Choice::kAlways);
  uint32_t seed = 6200;
  const std::vector<ConvShape> shapes = {
      {2, 16, 8, 8, 16, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},   // 3x3 same
      {2, 8, 9, 9, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},    // stride 2, odd input: adjustment 0
      {2, 8, 8, 8, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},    // stride 2, even input: adjustment 1
      {2, 8, 8, 8, 16, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},    // 1x1 downsample: adjustment 1
      {2, 3, 15, 15, 8, 7, 7, 1, {2, 2}, {3, 3, 3, 3}, {1, 1}},   // 7x7 stem
      {1, 4, 10, 11, 6, 3, 3, 1, {2, 2}, {0, 1, 2, 0}, {1, 1}},   // asymmetric pads
      {3, 24, 6, 6, 80, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},   // pointwise, too deep for the direct tiles
  };
  for (const ConvShape& s : shapes) {
    REQUIRE(check_deconv(s, seed += 2));
    REQUIRE(check_deconv(s, seed += 2, 1));
  }
}

TEST_CASE("cpu Conv2dGradInput keeps the gemm way for a trainable weight or when the rule says no",
          "[ops][cpu][grad][xnnpack]") {
  const ConvShape s{2, 8, 8, 8, 16, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
#ifdef POCK_HAVE_OPENBLAS
  const char* const gemm_backend = "cpu";
#else
  const char* const gemm_backend = "ref";
#endif
  {
    ForceChoice force(Choice::kAlways);
    const int before = cpu::conv_grad_xnnpack_testing::kernels_made();
    check_against_ref("cpu", grad_input_case(s, /*frozen_weight=*/false, 6301), gemm_backend);
    CHECK(cpu::conv_grad_xnnpack_testing::kernels_made() == before);  // a live weight is never packed
  }
  {
    ForceChoice force(Choice::kNever);
    const int before = cpu::conv_grad_xnnpack_testing::kernels_made();
    check_against_ref("cpu", grad_input_case(s, /*frozen_weight=*/true, 6303), gemm_backend);
    CHECK(cpu::conv_grad_xnnpack_testing::kernels_made() == before);
  }
}
