// A convolution that names its cpu algorithm (attribute "cpu_algorithm", recorded by `pockc
// compile --profile`) runs that algorithm, whatever the backend's own rule would pick, and gives
// the reference kernel's results within the tolerance of that algorithm's own tests (Winograd
// 3e-4 of |ref| + 1, tests/ops/test_cpu_conv_winograd.cpp; the direct ways 1e-4). The count of
// kernels made through each named algorithm checks that each case really ran it. An algorithm
// that cannot run the op is refused at load with a message naming it; an unknown name is refused
// when the graph is built. The reference backend ignores the attribute (check_against_ref runs
// the same op with it on ref).
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "ir/conv_algorithm.hpp"
#include "kernels/cpu/conv_algorithm_choice.hpp"
#include "kernels/cpu/conv_grad_xnnpack.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "kernels/cpu/depthwise_channels_last.hpp"
#include "kernels/cpu/depthwise_vector_rows.hpp"
#include "runtime/engine_core.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;
using pock::cpu::conv_algorithm_testing::kernels_made;

namespace {

OpCase named(OpCase c, ConvAlgorithm a) {
  c.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(a)));
  c.tolerance = a == ConvAlgorithm::kWinograd ? 3e-4 : 1e-4;
  return c;
}

// Runs `c` on cpu with algorithm `a` named and on ref; requires that `a` ran it: one kernel made
// through the name, and the Winograd and XNNPACK-deconvolution kernels' own counts grow exactly
// when they were named.
void check(const OpCase& c, ConvAlgorithm a, int threads) {
  INFO(c.op << " " << conv_algorithm_name(a) << " threads " << threads);
  const int before = kernels_made(a);
  const int winograd = cpu::conv_winograd_testing::kernels_made();
  const int deconvolution = cpu::conv_grad_xnnpack_testing::kernels_made();
  check_against_ref("cpu", named(c, a), "cpu", threads);
  CHECK(kernels_made(a) == before + 1);
  CHECK((cpu::conv_winograd_testing::kernels_made() > winograd) == (a == ConvAlgorithm::kWinograd));
  const bool xnnpack_grad = a == ConvAlgorithm::kXnnpack && c.op == "Conv2dGradInput";
  CHECK((cpu::conv_grad_xnnpack_testing::kernels_made() > deconvolution) == xnnpack_grad);
}

// The engine's open error for `c` with `a` named, on the cpu backend ("" when it opens).
std::string open_error(const OpCase& c, ConvAlgorithm a) {
  const OpCase hinted = named(c, a);
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < hinted.inputs.size(); ++i) {
    const Operand& in = hinted.inputs[i];
    const std::string name = "in" + std::to_string(i);
    ids.push_back(in.frozen ? g.add_parameter_f32(name, in.shape, in.values) : g.add_input(name, in.dtype, in.shape));
  }
  auto outs = g.add_node(hinted.op, ids, hinted.attrs, "node");
  REQUIRE(outs.is_ok());
  REQUIRE(g.mark_output(outs.value()[0], "out").is_ok());
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  EngineOptions options;
  options.backend = "cpu";
  auto engine = EngineCore::open_buffer(blob->data(), blob->size(), options);
  return engine.is_ok() ? "" : engine.status().message();
}

const ConvShape kDense{2, 16, 9, 7, 24, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};       // ragged Winograd tiles
const ConvShape kStrided{2, 8, 9, 9, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}};
const ConvShape kPointwise{2, 16, 6, 5, 8, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}};
const ConvShape kDepthwise{2, 12, 9, 10, 12, 3, 3, 12, {2, 2}, {1, 1, 1, 1}, {1, 1}};  // channels-last, 25 pixels
const ConvShape kDepthwiseWide{2, 6, 12, 12, 6, 3, 3, 6, {1, 1}, {1, 1, 1, 1}, {1, 1}};  // NCHW loops, 144 pixels
// NCHW loops on rows padded by one whose output width is a multiple of 8: every column in vectors.
const ConvShape kDepthwiseRows8{2, 5, 11, 8, 5, 3, 3, 5, {1, 1}, {1, 1, 1, 1}, {1, 1}};         // one vector a row
const ConvShape kDepthwiseRows16{1, 3, 9, 16, 6, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}};        // two, multiplier 2
const ConvShape kDepthwiseRows24Stride2{2, 4, 19, 48, 4, 3, 3, 4, {2, 2}, {1, 1, 1, 1}, {1, 1}};  // stride 2, 3 vectors
const ConvShape kDepthwiseRows8Stride2{1, 3, 24, 16, 3, 3, 3, 3, {2, 2}, {1, 1, 0, 0}, {1, 1}};   // no right/bottom pad
const ConvShape kDepthwiseRows32{2, 3, 5, 32, 3, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}};          // four vectors a row
// Widths not a multiple of 8: the last vector of a row overlaps the one before it.
const ConvShape kDepthwiseRows12{2, 3, 7, 12, 3, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}};
const ConvShape kDepthwiseRows28{1, 4, 6, 28, 8, 3, 3, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}};          // multiplier 2
const ConvShape kDepthwiseRows14Stride2{2, 3, 13, 28, 3, 3, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}};  // odd input height
// TensorFlow's "same" at stride 2 on even sizes: no pad on top and left, one on the bottom and right.
const ConvShape kDepthwiseRows8Same{2, 3, 16, 16, 3, 3, 3, 3, {2, 2}, {0, 0, 1, 1}, {1, 1}};
const ConvShape kDepthwiseRows13Same{1, 4, 20, 26, 4, 3, 3, 4, {2, 2}, {0, 0, 1, 1}, {1, 1}};
// 5x5 windows (EfficientNet-Lite, MobileNetV3): stride 1 padded by two, stride 2 padded by two
// (PyTorch) or by 1, 1, 2, 2 (TensorFlow's "same"); widths of 8, 10, 12 and 16.
const ConvShape kDepthwise5x5Rows8{2, 3, 9, 8, 3, 5, 5, 3, {1, 1}, {2, 2, 2, 2}, {1, 1}};
const ConvShape kDepthwise5x5Rows12{1, 4, 7, 12, 8, 5, 5, 4, {1, 1}, {2, 2, 2, 2}, {1, 1}};  // multiplier 2
const ConvShape kDepthwise5x5Rows10Stride2{2, 3, 16, 20, 3, 5, 5, 3, {2, 2}, {2, 2, 2, 2}, {1, 1}};
const ConvShape kDepthwise5x5Rows16Same{1, 3, 12, 32, 3, 5, 5, 3, {2, 2}, {1, 1, 2, 2}, {1, 1}};
const std::vector<ConvShape> kDepthwiseVectorRows{kDepthwiseRows8,         kDepthwiseRows16,    kDepthwiseRows32,
                                                  kDepthwiseRows24Stride2, kDepthwiseRows8Stride2, kDepthwiseRows12,
                                                  kDepthwiseRows28,        kDepthwiseRows14Stride2, kDepthwiseRows8Same,
                                                  kDepthwiseRows13Same,    kDepthwise5x5Rows8,  kDepthwise5x5Rows12,
                                                  kDepthwise5x5Rows10Stride2, kDepthwise5x5Rows16Same};

}  // namespace

TEST_CASE("the depthwise vector planes take MobileNet's and EfficientNet's layers at 224 pixels and TensorFlow's padding",
          "[ops][cpu][conv][conv_algorithm]") {
  // {in_h, in_w, stride, pad top and left, pad bottom and right}: the output follows.
  auto geometry = [](int64_t in_h, int64_t in_w, int64_t stride, int64_t pad, int64_t pad_end, int64_t kernel = 3) {
    cpu::ConvGeometry g;
    g.batch = 8;
    g.in_channels = g.out_channels = g.groups = 32;
    g.in_h = in_h;
    g.in_w = in_w;
    g.kernel_h = g.kernel_w = kernel;
    g.stride_h = g.stride_w = stride;
    g.pad_top = g.pad_left = pad;
    g.pad_bottom = g.pad_right = pad_end;
    g.out_h = (in_h + pad + pad_end - kernel) / stride + 1;
    g.out_w = (in_w + pad + pad_end - kernel) / stride + 1;
    return g;
  };
  for (int64_t side : {112, 56, 28, 14}) {
    CHECK(cpu::depthwise_vector_rows_take(geometry(side, side, 1, 1, 1)));
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(side, side, 1, 1, 1)));
    CHECK(cpu::depthwise_vector_rows_take(geometry(2 * side, 2 * side, 2, 1, 1)));  // PyTorch
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(2 * side, 2 * side, 2, 1, 1)));
    CHECK(cpu::depthwise_vector_rows_take(geometry(2 * side, 2 * side, 2, 0, 1)));  // TensorFlow "same"
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(2 * side, 2 * side, 2, 0, 1)));
  }
  // 5x5 (EfficientNet-Lite0 at 224): stride 1 padded by two; stride 2 as PyTorch and TensorFlow pad.
  for (int64_t side : {28, 14}) {
    CHECK(cpu::depthwise_vector_rows_take(geometry(side, side, 1, 2, 2, 5)));
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(side, side, 1, 2, 2, 5)));
    CHECK(cpu::depthwise_vector_rows_take(geometry(2 * side, 2 * side, 2, 2, 2, 5)));
    CHECK(cpu::depthwise_vector_rows_take(geometry(2 * side, 2 * side, 2, 1, 2, 5)));
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(2 * side, 2 * side, 2, 1, 2, 5)));
    CHECK(cpu::depthwise_vector_rows_take_input_gradient(geometry(2 * side, 2 * side, 2, 2, 2, 5)));
  }
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(9, 9, 1, 2, 2, 5)));  // a block would read past the row
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(17, 17, 1, 2, 2, 5)));
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(28, 28, 2, 0, 3, 5)));  // no pad on top and left
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(7, 7, 1, 1, 1)));    // rows narrower than a vector
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(27, 27, 2, 1, 1)));  // an odd input width
  CHECK_FALSE(cpu::depthwise_vector_rows_take(geometry(16, 16, 1, 0, 2)));  // stride 1 padded on one side
  cpu::ConvGeometry dilated = geometry(28, 28, 1, 1, 1);
  dilated.dilation_h = dilated.dilation_w = 2;
  CHECK_FALSE(cpu::depthwise_vector_rows_take(dilated));
  // Pad 0 on an odd input height: the forward's rows exist, dx's last row is no dy row's pair.
  CHECK(cpu::depthwise_vector_rows_take(geometry(29, 28, 2, 0, 1)));
  CHECK_FALSE(cpu::depthwise_vector_rows_take_input_gradient(geometry(29, 28, 2, 0, 1)));
}

TEST_CASE("a named cpu algorithm runs Conv2d and matches ref", "[ops][cpu][conv][conv_algorithm]") {
  uint32_t seed = 9100;
  for (int threads : {1, 2}) {
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kWinograd, ConvAlgorithm::kXnnpack}) {
      check(conv_forward_case(kDense, true, "relu", seed += 3), a, threads);
    }
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kWinograd}) {
      check(conv_forward_case(kDense, false, "none", seed += 3), a, threads);  // a trainable weight
    }
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kXnnpack}) {
      check(conv_forward_case(kStrided, true, "relu6", seed += 3), a, threads);
      check(conv_forward_case(kPointwise, true, "none", seed += 3), a, threads);
    }
    check(conv_forward_case(kPointwise, true, "relu6", seed += 3), ConvAlgorithm::kPointwise, threads);
    check(conv_forward_case(kPointwise, false, "none", seed += 3), ConvAlgorithm::kPointwise, threads);
    for (ConvAlgorithm a : {ConvAlgorithm::kDepthwise, ConvAlgorithm::kIm2col, ConvAlgorithm::kXnnpack}) {
      check(conv_forward_case(kDepthwise, true, "none", seed += 3), a, threads);
    }
    // Named "depthwise", the backend's direct loops run in the layout its rule picks by plane size.
    const int channels_last = cpu::depthwise_channels_last_testing::forward_kernels_made();
    check(conv_forward_case(kDepthwise, false, "relu6", seed += 3), ConvAlgorithm::kDepthwise, threads);
    CHECK(cpu::depthwise_channels_last_testing::forward_kernels_made() == channels_last + 1);
    check(conv_forward_case(kDepthwiseWide, false, "none", seed += 3), ConvAlgorithm::kDepthwise, threads);
    for (const ConvShape& rows : kDepthwiseVectorRows) {
      check(conv_forward_case(rows, false, "relu6", seed += 3), ConvAlgorithm::kDepthwise, threads);
      check(conv_forward_case(rows, true, "none", seed += 3), ConvAlgorithm::kDepthwise, threads);
    }
    CHECK(cpu::depthwise_channels_last_testing::forward_kernels_made() == channels_last + 1);
  }
}

TEST_CASE("a named cpu algorithm runs Conv2dGradInput and matches ref", "[ops][cpu][grad][conv][conv_algorithm]") {
  uint32_t seed = 9200;
  for (int threads : {1, 2}) {
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kWinograd, ConvAlgorithm::kXnnpack}) {
      check(grad_input_case(kDense, true, seed += 2), a, threads);
    }
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kWinograd}) {
      check(grad_input_case(kDense, false, seed += 2), a, threads);
    }
    for (ConvAlgorithm a : {ConvAlgorithm::kIm2col, ConvAlgorithm::kXnnpack}) {
      check(grad_input_case(kStrided, true, seed += 2), a, threads);
      check(grad_input_case(kPointwise, true, seed += 2), a, threads);
    }
    check(grad_input_case(kPointwise, false, seed += 2), ConvAlgorithm::kPointwise, threads);
    for (ConvAlgorithm a : {ConvAlgorithm::kDepthwise, ConvAlgorithm::kIm2col, ConvAlgorithm::kXnnpack}) {
      check(grad_input_case(kDepthwise, true, seed += 2), a, threads);
    }
    const int channels_last = cpu::depthwise_channels_last_testing::gradient_kernels_made();
    check(grad_input_case(kDepthwise, false, seed += 2), ConvAlgorithm::kDepthwise, threads);
    CHECK(cpu::depthwise_channels_last_testing::gradient_kernels_made() == channels_last + 1);
    check(grad_input_case(kDepthwiseWide, false, seed += 2), ConvAlgorithm::kDepthwise, threads);
    // Padded by one: dx through the vector planes (stride 1: the forward's, the taps turned;
    // stride 2: by the parities of dx, with an input of twice the output's rows or one fewer).
    for (const ConvShape& rows : kDepthwiseVectorRows) {
      check(grad_input_case(rows, false, seed += 2), ConvAlgorithm::kDepthwise, threads);
      check(grad_input_case(rows, true, seed += 2), ConvAlgorithm::kDepthwise, threads);
    }
    CHECK(cpu::depthwise_channels_last_testing::gradient_kernels_made() == channels_last + 1);
  }
}

TEST_CASE("the depthwise loops: a NaN or infinity reaches exactly the outputs whose window reads it",
          "[ops][cpu][conv][conv_algorithm]") {
  // Non-finite values on the first and last rows and columns of a plane, where the vector planes
  // bring zero lanes in and the row loops read padding rows through zero taps: an output whose
  // window covers only padding there must stay finite, as in ref.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 9500;
  for (const ConvShape& s : {kDepthwiseRows8, kDepthwiseRows32, kDepthwiseRows24Stride2, kDepthwiseRows12,
                             kDepthwiseRows14Stride2, kDepthwiseRows13Same, kDepthwise5x5Rows12,
                             kDepthwise5x5Rows16Same, kDepthwiseWide}) {
    for (bool gradient : {false, true}) {
      OpCase c = gradient ? grad_input_case(s, false, seed += 2) : conv_forward_case(s, false, "none", seed += 3);
      // The image input: x forward, dy for the input gradient (whose planes are the output's).
      const int64_t rows = gradient ? s.out_h() : s.height, cols = gradient ? s.out_w() : s.width;
      std::vector<float>& v = c.inputs[0].values;
      v[0] = nan;                                  // image 0, channel 0: top-left corner
      v[(rows - 1) * cols + cols - 1] = inf;       // its bottom-right corner
      v[rows * cols + cols - 1] = -inf;            // channel 1: top-right corner
      v[2 * rows * cols + (rows - 1) * cols] = nan;  // channel 2: bottom-left corner
      check(c, ConvAlgorithm::kDepthwise, 1);
    }
  }
}

TEST_CASE("a named cpu algorithm that cannot run the op is refused at load, by name", "[ops][cpu][conv][conv_algorithm]") {
  struct Refused {
    OpCase c;
    ConvAlgorithm a;
  };
  const std::vector<Refused> cases = {
      {conv_forward_case(kStrided, true, "none", 9301), ConvAlgorithm::kWinograd},    // stride 2
      {conv_forward_case(kPointwise, true, "none", 9302), ConvAlgorithm::kWinograd},  // 1x1
      {conv_forward_case(kDense, false, "none", 9303), ConvAlgorithm::kXnnpack},      // trainable weight
      {conv_forward_case(kDense, true, "none", 9304), ConvAlgorithm::kDepthwise},     // dense
      {grad_input_case(kStrided, true, 9305), ConvAlgorithm::kWinograd},
      {grad_input_case(kDense, false, 9306), ConvAlgorithm::kXnnpack},
      {grad_input_case(kDense, true, 9307), ConvAlgorithm::kDepthwise},
      {conv_forward_case(kStrided, true, "none", 9308), ConvAlgorithm::kPointwise},  // 1x1 only
      {conv_forward_case(kDense, false, "none", 9309), ConvAlgorithm::kPointwise},
      {grad_input_case(kDepthwise, false, 9310), ConvAlgorithm::kPointwise},
  };
  for (const Refused& r : cases) {
    INFO(r.c.op << " " << conv_algorithm_name(r.a));
    const std::string error = open_error(r.c, r.a);
    CHECK(error.find(r.c.op + " 'node'") != std::string::npos);
    CHECK(error.find(std::string("cpu algorithm ") + conv_algorithm_name(r.a)) != std::string::npos);
  }
}

TEST_CASE("an unknown cpu algorithm is refused when the graph is built", "[ops][cpu][conv][conv_algorithm]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, kDense.x());
  const TensorId w = g.add_input("w", DType::kF32, kDense.w());
  for (const AttrValue& value : {AttrValue(std::string("fastest")), AttrValue(int64_t{1})}) {
    Attrs attrs = kDense.attrs();
    attrs.set(kConvAlgorithmAttr, value);
    auto outs = g.add_node("Conv2d", {x, w}, attrs, "node");
    REQUIRE_FALSE(outs.is_ok());
    CHECK(outs.status().message().find("attribute 'cpu_algorithm' must be im2col, winograd, xnnpack, depthwise or pointwise") !=
          std::string::npos);
  }
}
