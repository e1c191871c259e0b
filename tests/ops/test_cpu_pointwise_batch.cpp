// 1x1 convolutions on small planes run as one GEMM over the whole batch (kernels/cpu/
// pointwise_batch.hpp): the forward (with bias and a fused activation), the input gradient and the
// weight gradient (also partial-channel) against ref, at MobileNetV2's late-layer shapes and at
// the edges of the rule (one image; a 16x16 plane, the largest batched; 17x17, the smallest not).
// The forward and input-gradient cases name the im2col algorithm: the rule sends short
// reductions to the direct 1x1 tiles instead (test_cpu_conv_pointwise.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "ir/conv_algorithm.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;

namespace {

ConvShape pointwise(int64_t batch, int64_t channels, int64_t side, int64_t out_channels) {
  return {batch, channels, side, side, out_channels, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}};
}

OpCase through_sgemm(OpCase c) {
  c.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(ConvAlgorithm::kIm2col)));
  return c;
}

}  // namespace

TEST_CASE("cpu 1x1 convolutions batched over images match ref", "[ops][cpu]") {
  uint32_t seed = 4100;
  for (const ConvShape& s : {pointwise(8, 96, 4, 24), pointwise(8, 32, 8, 80), pointwise(3, 7, 5, 9),
                             pointwise(1, 6, 4, 5), pointwise(2, 5, 16, 6), pointwise(2, 5, 17, 6)}) {
    for (bool frozen_weight : {false, true}) {
      OpCase fwd{"Conv2d", {input(s.x(), ++seed), frozen_weight ? frozen(s.w(), ++seed) : input(s.w(), ++seed),
                            input({s.out_channels}, ++seed)}, s.attrs()};
      fwd.attrs.set("activation", std::string("relu6"));
      check_against_ref("cpu", through_sgemm(fwd), "cpu");
      check_against_ref("cpu", through_sgemm(grad_input_case(s, frozen_weight, ++seed)), "cpu");
    }
    check_against_ref("cpu", grad_weight_case(s, 0, ++seed), "cpu");
    check_against_ref("cpu", grad_weight_case(s, (s.out_channels + 1) / 2, ++seed), "cpu");  // partial channels
  }
  check_against_ref("cpu", through_sgemm(grad_input_case(pointwise(8, 64, 4, 128), true, 1)), "cpu", 1);  // one thread
}
