// The cpu backend's backward and optimizer kernels against the reference kernels, on random
// shapes (support/backend_compare.hpp: same blob on a cpu-preferring and a ref-preferring
// engine, binding checked, every output and every in-place update compared).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/depthwise_channels_last.hpp"
#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;

namespace {

const char* const kCpu = "cpu";
const char* const kRef = "ref";

// Where a kernel that needs OpenBLAS binds in this build.
#ifdef POCK_HAVE_OPENBLAS
const char* const kBlasBackend = kCpu;
#else
const char* const kBlasBackend = kRef;
#endif

void check(const OpCase& c, const std::string& expected = kCpu, int num_threads = 0) {
  check_against_ref(kCpu, c, expected, num_threads);
}

// ---- convolution ------------------------------------------------------------------------------

// Direct loops take depthwise layers (no library); OpenBLAS (im2col / col2im) takes the rest.
const char* conv_grad_backend(const ConvShape& s) { return s.depthwise() ? kCpu : kBlasBackend; }

}  // namespace

TEST_CASE("cpu Conv2dGradInput matches ref: strided, padded, dilated, grouped, depthwise", "[ops][cpu][grad]") {
  std::mt19937 gen(11);
  uint32_t seed = 1100;
  for (int trial = 0; trial < 2; ++trial) {
    for (const ConvShape& s : conv_shapes(gen)) {
      for (bool frozen_weight : {false, true}) {
        INFO((frozen_weight ? "frozen weight" : "live weight"));
        check(grad_input_case(s, frozen_weight, seed += 2), conv_grad_backend(s));
      }
    }
  }
  // MobileNet-sized layers, once on one thread.
  const ConvShape depthwise{2, 32, 28, 28, 32, 3, 3, 32, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  const ConvShape pointwise{2, 16, 14, 14, 24, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  const ConvShape dense{2, 8, 16, 16, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}};
  for (const ConvShape& s : {depthwise, pointwise, dense}) {
    check(grad_input_case(s, false, seed += 2), conv_grad_backend(s));
    check(grad_input_case(s, false, seed += 2), conv_grad_backend(s), 1);
  }
}

TEST_CASE("cpu Conv2dGradWeight matches ref, all channels and the first k", "[ops][cpu][grad]") {
  std::mt19937 gen(12);
  uint32_t seed = 1200;
  for (int trial = 0; trial < 2; ++trial) {
    for (const ConvShape& s : conv_shapes(gen)) {
      check(grad_weight_case(s, 0, seed += 2), conv_grad_backend(s));
      // Partial-channel updates: a k that ends inside a group, and k = 1.
      const int64_t k = random_dim(gen, 1, s.out_channels);
      INFO("channels " << k);
      check(grad_weight_case(s, k, seed += 2), conv_grad_backend(s));
      check(grad_weight_case(s, 1, seed += 2), conv_grad_backend(s));
    }
  }
  const ConvShape depthwise{4, 32, 28, 28, 32, 3, 3, 32, {2, 2}, {1, 1, 1, 1}, {1, 1}};
  const ConvShape dense{4, 8, 16, 16, 16, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  for (const ConvShape& s : {depthwise, dense}) {
    check(grad_weight_case(s, 0, seed += 2), conv_grad_backend(s));
    check(grad_weight_case(s, s.out_channels / 4, seed += 2), conv_grad_backend(s), 1);
  }
}

// The depthwise kernels (kernels/cpu/conv_grad_depthwise.cpp) split each plane by the residues of
// its coordinates mod the stride and copy it with zero margins into a stack scratch; what does
// not fit the scratch (big planes, kernels wider than 16, many taps) goes row by row. Both ways,
// on shapes that make every margin and phase count: odd extents, strides 1-3, asymmetric padding,
// dilation, batch > 1, multipliers 1-3, and the 4x4 / 8x8 planes of MobileNet's last blocks.
TEST_CASE("cpu depthwise Conv2dGradInput and Conv2dGradWeight match ref on odd shapes", "[ops][cpu][grad]") {
  std::mt19937 gen(15);
  uint32_t seed = 1500;
  auto both = [&](const ConvShape& s) {
    INFO("x " << shape_str(s.x()) << " w " << shape_str(s.w()) << " strides " << s.strides[0] << "," << s.strides[1]
              << " pads " << s.pads[0] << "," << s.pads[1] << "," << s.pads[2] << "," << s.pads[3] << " dilations "
              << s.dilations[0] << "," << s.dilations[1]);
    REQUIRE(s.depthwise());
    check(grad_input_case(s, false, seed += 2));
    check(grad_weight_case(s, 0, seed += 2));
    check(grad_weight_case(s, random_dim(gen, 1, s.out_channels), seed += 2));
  };
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t c = random_dim(gen, 2, 5), multiplier = random_dim(gen, 1, 3);  // groups > 1: depthwise
    const int64_t k = 2 * random_dim(gen, 1, 2) + 1, stride = random_dim(gen, 1, 3), dilation = random_dim(gen, 1, 2);
    const int64_t extent = dilation * (k - 1) + 1;  // the pads keep every output extent >= 1
    const int64_t h = 2 * random_dim(gen, extent / 2, 16) + 1, w = 2 * random_dim(gen, extent / 2, 16) + 1;
    const Ints pads{random_dim(gen, 0, k / 2), random_dim(gen, 0, k / 2), random_dim(gen, 0, k / 2),
                    random_dim(gen, 0, k / 2)};
    both({random_dim(gen, 1, 3), c, h, w, c * multiplier, k, k, c, {stride, random_dim(gen, 1, 2)}, pads,
          {dilation, 1}});
  }
  both({3, 8, 4, 4, 8, 3, 3, 8, {1, 1}, {1, 1, 1, 1}, {1, 1}});    // MobileNetV2 features.15-17 at 128 px
  both({2, 8, 8, 8, 8, 3, 3, 8, {2, 2}, {1, 1, 1, 1}, {1, 1}});    // features.14
  both({2, 4, 9, 7, 8, 3, 3, 4, {2, 2}, {0, 1, 1, 0}, {1, 1}});    // odd extents, TF-style same padding
  both({1, 2, 150, 140, 2, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}});  // beyond the stack scratch: by rows
  both({1, 2, 150, 141, 4, 3, 3, 2, {2, 2}, {1, 1, 1, 1}, {1, 1}});
  both({2, 3, 9, 21, 3, 3, 17, 3, {1, 1}, {1, 8, 1, 8}, {1, 1}});    // kernel wider than 16: by rows
  // 3x3 padded by one, output widths a multiple of 8 (depthwise_vector_rows.hpp): whole planes in
  // vectors; one, two and four vectors a row, stride 1 and 2, an odd input height, multiplier 2.
  both({2, 5, 11, 8, 5, 3, 3, 5, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  both({1, 3, 9, 16, 6, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  both({2, 3, 5, 32, 3, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  both({2, 4, 19, 48, 4, 3, 3, 4, {2, 2}, {1, 1, 1, 1}, {1, 1}});
  both({1, 3, 24, 16, 3, 3, 3, 3, {2, 2}, {1, 1, 0, 0}, {1, 1}});
  // Widths not a multiple of 8 (the last vector of a row overlaps the one before it: the weight
  // gradient counts its columns once), and TensorFlow's "same" at stride 2 (pads 0, 0, 1, 1).
  both({2, 3, 7, 12, 3, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  both({1, 2, 6, 28, 4, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  both({2, 3, 13, 28, 3, 3, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}});
  both({2, 3, 16, 16, 3, 3, 3, 3, {2, 2}, {0, 0, 1, 1}, {1, 1}});
  both({1, 4, 20, 26, 4, 3, 3, 4, {2, 2}, {0, 0, 1, 1}, {1, 1}});
  both({1, 2, 11, 26, 2, 3, 3, 2, {2, 2}, {0, 0, 0, 1}, {1, 1}});  // forward rows only: 11 = 2 x 5 + 1
  // 5x5 (depthwise_vector_rows_5x5.cpp): stride 1 padded by two, stride 2 as PyTorch and
  // TensorFlow pad it; widths of 8, 10, 12, 14 and 16; planes of 1 to 16 rows.
  both({2, 3, 9, 8, 3, 5, 5, 3, {1, 1}, {2, 2, 2, 2}, {1, 1}});
  both({1, 2, 7, 12, 4, 5, 5, 2, {1, 1}, {2, 2, 2, 2}, {1, 1}});
  both({1, 2, 1, 14, 2, 5, 5, 2, {1, 1}, {2, 2, 2, 2}, {1, 1}});
  both({2, 3, 15, 20, 3, 5, 5, 3, {2, 2}, {2, 2, 2, 2}, {1, 1}});  // dx by the loops: 15 rows
  both({2, 3, 16, 20, 3, 5, 5, 3, {2, 2}, {2, 2, 2, 2}, {1, 1}});  // dx by parities
  both({1, 3, 12, 32, 3, 5, 5, 3, {2, 2}, {1, 1, 2, 2}, {1, 1}});
  both({1, 2, 4, 16, 2, 5, 5, 2, {2, 2}, {1, 1, 2, 2}, {1, 1}});
}

// Depthwise layers of multiplier 1 onto planes up to 64 pixels run channels-last in scratch
// (kernels/cpu/conv_grad_depthwise_nhwc.cpp): channel counts that leave vector tails and span
// several 64-channel blocks of the weight gradient (with a partial-channel k inside a block),
// strides, dilations, asymmetric pads, one and every thread.
TEST_CASE("cpu channels-last depthwise gradients match ref on small planes", "[ops][cpu][grad]") {
  std::mt19937 gen(16);
  uint32_t seed = 1600;
  auto all = [&](const ConvShape& s, int threads) {
    INFO("x " << shape_str(s.x()) << " strides " << s.strides[0] << "," << s.strides[1] << " pads " << s.pads[0]
              << "," << s.pads[1] << "," << s.pads[2] << "," << s.pads[3] << " dilations " << s.dilations[0] << ","
              << s.dilations[1] << " threads " << threads);
    REQUIRE(s.depthwise());
    check(grad_input_case(s, false, seed += 2), kCpu, threads);
    check(grad_input_case(s, true, seed += 2), kCpu, threads);
    check(grad_weight_case(s, 0, seed += 2), kCpu, threads);
    check(grad_weight_case(s, random_dim(gen, 1, s.out_channels), seed += 2), kCpu, threads);
  };
  for (int trial = 0; trial < 10; ++trial) {
    const int64_t c = random_dim(gen, 1, 150), k = 2 * random_dim(gen, 0, 2) + 1, dilation = random_dim(gen, 1, 2);
    const int64_t extent = dilation * (k - 1) + 1;
    const int64_t h = random_dim(gen, extent, std::max<int64_t>(extent, 8));
    const int64_t w = random_dim(gen, extent, std::max<int64_t>(extent, 8));
    const Ints pads{random_dim(gen, 0, k / 2), random_dim(gen, 0, k / 2), random_dim(gen, 0, k / 2),
                    random_dim(gen, 0, k / 2)};
    all({random_dim(gen, 1, 3), c, h, w, c, k, k, c, {random_dim(gen, 1, 3), random_dim(gen, 1, 2)}, pads,
         {dilation, random_dim(gen, 1, 2)}},
        trial % 2 ? 1 : 0);
  }
  // These run channels-last: four kernels each (both input gradients, both weight gradients).
  const int before = cpu::depthwise_channels_last_testing::gradient_kernels_made();
  all({8, 960, 4, 4, 960, 3, 3, 960, {1, 1}, {1, 1, 1, 1}, {1, 1}}, 1);  // MobileNetV2 features.15-17 at 128 px
  all({8, 576, 8, 8, 576, 3, 3, 576, {2, 2}, {1, 1, 1, 1}, {1, 1}}, 0);  // features.14
  // The largest output planes taken, at stride 1 with the pads of one side only: a window the
  // vector planes (depthwise_vector_rows.hpp) do not take.
  all({2, 130, 9, 9, 130, 3, 3, 130, {1, 1}, {0, 0, 1, 1}, {1, 1}}, 0);
  CHECK(cpu::depthwise_channels_last_testing::gradient_kernels_made() == before + 12);
}

TEST_CASE("cpu Conv2dGradBias and SumToShape match ref on the patterns backward passes use", "[ops][cpu][grad]") {
  std::mt19937 gen(13);
  uint32_t seed = 1300;
  for (int trial = 0; trial < 3; ++trial) {
    const int64_t n = random_dim(gen, 1, 4), c = random_dim(gen, 1, 20), h = random_dim(gen, 1, 9),
                  w = random_dim(gen, 1, 9);
    check({"Conv2dGradBias", {input({n, c, h, w}, ++seed)}});
    check({"Conv2dGradBias", {input({n, c, h, w}, ++seed)}, {{"channels", random_dim(gen, 1, c)}}});
    check({"Conv2dGradBias", {input({n, c}, ++seed)}});  // no spatial axes: column sums

    auto sum_to = [&](Shape from, Ints to, const std::string& expected = kCpu) {
      INFO("to " << shape_str(to));
      check({"SumToShape", {input(std::move(from), ++seed)}, {{"shape", to}}}, expected);
    };
    sum_to({n, c, h, w}, {1, c, 1, 1});  // per-channel scale
    sum_to({n, c, h, w}, {c, 1, 1});     // missing leading dim
    sum_to({n * h, w}, {w});             // bias row
    sum_to({n, h, w}, {1, 1, w});
    sum_to({n, h, w}, {h, 1});           // a middle dim
    sum_to({n, h, w}, {n, 1, 1});        // leading dim kept
    sum_to({n, c, h, w}, {1});           // everything
    sum_to({n, c, h, w}, {});            // everything, rank 0
    sum_to({n, c, h, w}, {n, c, h, w});  // nothing: a copy
    sum_to({2, 3, 4}, {2, 1, 4}, kRef);  // a summed dim between kept ones: not handled here
  }
  // Large enough for the thread pool, and rows longer than one f32 piece.
  check({"SumToShape", {input({300, 257}, 1)}, {{"shape", Ints{257}}}});
  check({"SumToShape", {input({4, 64, 30, 30}, 2)}, {{"shape", Ints{1, 64, 1, 1}}}});
  check({"SumToShape", {input({100000}, 3)}, {{"shape", Ints{1}}}});
  check({"Conv2dGradBias", {input({8, 32, 24, 24}, 4)}}, kCpu, 1);
  // Short rows summed through column buffers (axis_sum.cpp): MobileNetV2's 4x4 layers, 300
  // channels in five buffers of 64, all of them or the first 150; a ragged 7-value row; two threads.
  check({"Conv2dGradBias", {input({8, 300, 4, 4}, 5)}});
  check({"Conv2dGradBias", {input({8, 300, 4, 4}, 6)}, {{"channels", int64_t{150}}}});
  check({"Conv2dGradBias", {input({5, 200, 1, 7}, 7)}}, kCpu, 2);
  check({"SumToShape", {input({6, 90, 3, 3}, 8)}, {{"shape", Ints{1, 90, 1, 1}}}});
}

namespace {

int64_t pool_extent(int64_t input, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  const int64_t padded = input + pad_begin + pad_end;
  if (!ceil_mode) return (padded - kernel) / stride + 1;
  int64_t out = (padded - kernel + stride - 1) / stride + 1;
  if ((out - 1) * stride >= input + pad_begin) --out;
  return out;
}

struct PoolShape {
  Shape x;
  Ints kernel, strides, pads;
  bool ceil_mode;
  Shape dy() const {
    return {x[0], x[1], pool_extent(x[2], kernel[0], strides[0], pads[0], pads[2], ceil_mode),
            pool_extent(x[3], kernel[1], strides[1], pads[1], pads[3], ceil_mode)};
  }
  Attrs attrs() const {
    Attrs a;
    a.set("kernel", kernel);
    a.set("strides", strides);
    a.set("pads", pads);
    a.set("ceil_mode", int64_t{ceil_mode});
    return a;
  }
};

}  // namespace

TEST_CASE("cpu MaxPool2dGrad and AvgPool2dGrad match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(14);
  uint32_t seed = 1400;
  for (int trial = 0; trial < 3; ++trial) {
    const Shape x{random_dim(gen, 1, 3), random_dim(gen, 1, 6), random_dim(gen, 4, 15), random_dim(gen, 4, 15)};
    const std::vector<PoolShape> shapes = {
        {x, {2, 2}, {2, 2}, {0, 0, 0, 0}, false},
        {x, {3, 3}, {2, 2}, {1, 1, 1, 1}, false},        // overlapping windows
        {x, {3, 3}, {2, 2}, {1, 1, 1, 1}, true},         // ceil_mode: a partial last window
        {x, {3, 2}, {1, 2}, {1, 0, 0, 1}, false},        // rectangular, asymmetric padding
        {x, {x[2], x[3]}, {1, 1}, {0, 0, 0, 0}, false},  // global pooling
    };
    for (const PoolShape& s : shapes) {
      check({"MaxPool2dGrad", {input(s.dy(), ++seed), input(s.x, ++seed)}, s.attrs()});
      for (int64_t include_pad : {0, 1}) {
        OpCase c{"AvgPool2dGrad", {input(s.dy(), ++seed)}, s.attrs()};
        c.attrs.set("input_shape", s.x);
        c.attrs.set("count_include_pad", include_pad);
        check(c);
      }
    }
  }
}

// MaxPool2dGrad scans the unclipped windows of an output row together in vector lanes (in blocks
// of 16, the extra lanes reading on into the next row), and the rest one by one: on planes wide
// enough for both, with ties everywhere (values on a grid of four) and NaN and -inf mixed in, each
// window must pick ref's element — the first maximum, or the last NaN — and dx match ref.
TEST_CASE("cpu MaxPool2dGrad picks ref's element on ties, NaN and -inf", "[ops][cpu][grad]") {
  std::mt19937 gen(16);
  uint32_t seed = 1600;
  const std::vector<PoolShape> shapes = {
      {{2, 3, 33, 47}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false},    // ResNet's stem pooling, odd extents
      {{1, 2, 64, 64}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false},    // 31 windows per row: lanes past the row
      {{2, 2, 20, 37}, {2, 2}, {2, 2}, {0, 0, 0, 0}, false},
      {{1, 2, 19, 40}, {3, 3}, {1, 1}, {1, 1, 1, 1}, false},    // stride 1
      {{1, 1, 9, 70}, {5, 4}, {3, 3}, {2, 1, 2, 2}, true},      // another stride, ceil_mode
  };
  for (const PoolShape& s : shapes) {
    INFO("x " << shape_str(s.x) << " kernel " << s.kernel[0] << "x" << s.kernel[1]);
    std::vector<float> x(static_cast<size_t>(numel(s.x)));
    for (float& v : x) {
      const int64_t r = random_dim(gen, 0, 99);
      v = r == 0 ? std::numeric_limits<float>::quiet_NaN()
                 : r == 1 ? -std::numeric_limits<float>::infinity() : static_cast<float>(r % 4);
    }
    for (size_t i = 0; i < x.size() / 16; ++i) x[i] = -std::numeric_limits<float>::infinity();  // all -inf windows
    check({"MaxPool2dGrad", {input(s.dy(), ++seed), values(s.x, x)}, s.attrs()});
    check({"MaxPool2dGrad", {input(s.dy(), ++seed), values(s.x, x)}, s.attrs()}, kCpu, 1);
  }
}

TEST_CASE("cpu BatchNorm, BatchNormTrain, BatchNormTrainGrad and BatchNormParamGrad match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(15);
  uint32_t seed = 1500;
  for (int trial = 0; trial < 4; ++trial) {
    const Shape x =
        trial == 3 ? Shape{random_dim(gen, 2, 16), random_dim(gen, 1, 40)}
                   : Shape{random_dim(gen, 1, 4), random_dim(gen, 1, 12), random_dim(gen, 1, 9), random_dim(gen, 2, 9)};
    const Shape ch{x[1]};
    // Offset inputs: a mean far from zero catches a one-pass variance.
    OpCase train{"BatchNormTrain",
                 {input(x, ++seed, 2.0f, 4.0f), input(ch, ++seed), input(ch, ++seed), input(ch, ++seed),
                  input(ch, ++seed, 0.5f, 2.0f)},
                 {{"eps", 1e-3}, {"momentum", 0.2}}};
    train.updated_inputs = {3, 4};  // running mean and variance
    check(train);
    // The inference form that frozen layers run, with frozen (constant) statistics and live ones.
    check({"BatchNorm",
           {input(x, ++seed, 2.0f, 4.0f), frozen(ch, ++seed), frozen(ch, ++seed), input(ch, ++seed, 2.5f, 3.5f),
            input(ch, ++seed, 0.5f, 2.0f)},
           {{"eps", 1e-3}}});

    const Operand mean = input(ch, ++seed, 2.5f, 3.5f), invstd = input(ch, ++seed, 0.5f, 2.0f);
    check({"BatchNormTrainGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd, input(ch, ++seed)}});
    check({"BatchNormTrainGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});  // no gamma
    check({"BatchNormParamGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});
  }
  // Planes longer than one f32 piece, channels split over the pool.
  const Shape big{2, 16, 64, 72};
  OpCase train{"BatchNormTrain",
               {input(big, 1), input({16}, 2), input({16}, 3), input({16}, 4), input({16}, 5, 0.5f, 2.0f)}};
  train.updated_inputs = {3, 4};
  check(train);
  check({"BatchNorm", {input(big, 11), input({16}, 12), input({16}, 13), input({16}, 14), input({16}, 15, 0.5f, 2.0f)}});
  check({"BatchNormTrainGrad",
         {input(big, 6), input(big, 7), input({16}, 8), input({16}, 9, 0.5f, 2.0f), input({16}, 10)}});
  // Many images of a small plane: a channel's rows are summed 4096 values (256 rows of 15) a call,
  // two and a bit calls per channel, each with a ragged tail of 7 per row.
  const Shape many{600, 3, 3, 5};
  OpCase many_train{"BatchNormTrain", {input(many, 21, 2.0f, 4.0f), input({3}, 22), input({3}, 23), input({3}, 24),
                                       input({3}, 25, 0.5f, 2.0f)}};
  many_train.updated_inputs = {3, 4};
  check(many_train);
  check({"BatchNormTrainGrad",
         {input(many, 26), input(many, 27, 2.0f, 4.0f), input({3}, 28, 2.5f, 3.5f), input({3}, 29, 0.5f, 2.0f),
          input({3}, 30)}});
  // The fused activations, with gammas of up to 8 so that both of Relu6's bounds clamp, and NaNs,
  // which pass through.
  for (const char* activation : {"relu", "relu6"}) {
    const Shape x{3, 5, 7, 9}, ch{5};
    std::uniform_real_distribution<float> spread(2.0f, 4.0f);
    std::vector<float> with_nan(static_cast<size_t>(numel(x)));
    for (float& v : with_nan) v = spread(gen);
    with_nan[17] = std::numeric_limits<float>::quiet_NaN();
    OpCase fused{"BatchNormTrain",
                 {input(x, ++seed, 2.0f, 4.0f), input(ch, ++seed, -8.0f, 8.0f), input(ch, ++seed), input(ch, ++seed),
                  input(ch, ++seed, 0.5f, 2.0f)},
                 {{"activation", std::string(activation)}}};
    fused.updated_inputs = {3, 4};
    check(fused);
    check({"BatchNorm",
           {values(x, with_nan), input(ch, ++seed, -8.0f, 8.0f), input(ch, ++seed), input(ch, ++seed, 2.5f, 3.5f),
            input(ch, ++seed, 0.5f, 2.0f)},
           {{"activation", std::string(activation)}}});
  }
}

TEST_CASE("cpu LayerNormGrad and RMSNormGrad match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(16);
  uint32_t seed = 1600;
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t rows = random_dim(gen, 1, 40), width = random_dim(gen, 1, 200);
    const Shape x{rows, width}, r{rows}, f{width};
    const Operand mean = input(r, ++seed, 2.5f, 3.5f), invstd = input(r, ++seed, 0.5f, 2.0f);
    check({"LayerNormGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd, input(f, ++seed)}});
    check({"LayerNormGrad", {input(x, ++seed), input(x, ++seed, 2.0f, 4.0f), mean, invstd}});  // no gamma
    check({"RMSNormGrad", {input(x, ++seed), input(x, ++seed), invstd, input(f, ++seed)}});
    check({"RMSNormGrad", {input(x, ++seed), input(x, ++seed), invstd}});
  }
  // Normalizing the last two dims (axis -2 / 1).
  check({"LayerNormGrad",
         {input({3, 4, 5}, 1), input({3, 4, 5}, 2), input({3}, 3), input({3}, 4, 0.5f, 2.0f), input({4, 5}, 5)},
         {{"axis", int64_t{-2}}}});
  check({"RMSNormGrad",
         {input({3, 4, 5}, 6), input({3, 4, 5}, 7), input({3}, 8, 0.5f, 2.0f), input({4, 5}, 9)},
         {{"axis", int64_t{1}}}});
  // Rows split over the pool; features split over the pool for dgamma.
  check(
      {"LayerNormGrad",
       {input({512, 96}, 10), input({512, 96}, 11), input({512}, 12), input({512}, 13, 0.5f, 2.0f), input({96}, 14)}});
  check(
      {"RMSNormGrad", {input({64, 2048}, 15), input({64, 2048}, 16), input({64}, 17, 0.5f, 2.0f), input({2048}, 18)}});
}

TEST_CASE("cpu SoftmaxGrad and LogSoftmaxGrad match ref on the last axis", "[ops][cpu][grad]") {
  std::mt19937 gen(17);
  uint32_t seed = 1700;
  for (int trial = 0; trial < 4; ++trial) {
    const Shape s{random_dim(gen, 1, 3), random_dim(gen, 1, 40), random_dim(gen, 1, 300)};
    check({"SoftmaxGrad", {input(s, ++seed), input(s, ++seed, 0.0f, 1.0f)}});
    check({"LogSoftmaxGrad", {input(s, ++seed), input(s, ++seed, -12.0f, 0.0f)}, {{"axis", int64_t{2}}}});
  }
  check({"SoftmaxGrad", {input({2, 5, 1}, 1), input({2, 5, 1}, 2, 0.0f, 1.0f)}, {{"axis", int64_t{1}}}});  // trailing 1
  check({"LogSoftmaxGrad", {input({600, 128}, 3), input({600, 128}, 4, -12.0f, 0.0f)}});  // thread pool
  check({"SoftmaxGrad", {input({4, 6}, 5), input({4, 6}, 6, 0.0f, 1.0f)}, {{"axis", int64_t{0}}}},
        kRef);  // strided axis
}

TEST_CASE("cpu activation gradients match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(18);
  uint32_t seed = 1800;
  const std::vector<ActivationGradCase> activations = activation_grad_cases();
  for (const ActivationGradCase& a : activations) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape shape{random_dim(gen, 1, 5), random_dim(gen, 1, 333)};  // odd sizes exercise loop tails
      check({a.op, {input(shape, ++seed), input(shape, ++seed, a.lo, a.hi)}, a.attrs});
    }
    check({a.op, {input({41000}, ++seed), input({41000}, ++seed, a.lo, a.hi)}, a.attrs});  // thread pool
  }
  // Extremes saturate instead of overflowing; NaN passes through as in ref.
  const std::vector<float> extremes = {-200.0f, -90.0f, 90.0f, 200.0f, NAN, -0.0f, 0.0f};
  const Shape n{static_cast<int64_t>(extremes.size())};
  for (const ActivationGradCase& a : activations) check({a.op, {input(n, ++seed), values(n, extremes)}, a.attrs});
}

TEST_CASE("cpu LinearInputGrad and LinearWeightGrad match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(19);
  uint32_t seed = 1900;
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t rows = random_dim(gen, 1, 30), n = random_dim(gen, 1, 50), k = random_dim(gen, 1, 90);
    check({"LinearInputGrad", {input({rows, n}, ++seed), input({n, k}, ++seed)}}, kBlasBackend);
    check({"LinearInputGrad", {input({2, rows, n}, ++seed), frozen({n, k}, ++seed)}}, kBlasBackend);
    check({"LinearWeightGrad", {input({rows, n}, ++seed), input({rows, k}, ++seed)}}, kBlasBackend);
    check({"LinearWeightGrad", {input({3, rows, n}, ++seed), input({3, rows, k}, ++seed)}}, kBlasBackend);
  }
}

TEST_CASE("cpu SoftmaxCrossEntropy and its gradient match ref", "[ops][cpu][grad]") {
  std::mt19937 gen(20);
  uint32_t seed = 2000;
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t rows = random_dim(gen, 1, 30), classes = random_dim(gen, 2, 300);
    const Operand logits = input({rows, classes}, ++seed, -8.0f, 8.0f);
    const Operand labels = int64s({rows}, random_labels(gen, rows, classes, trial % 2 ? 3 : 0));
    for (double smoothing : {0.0, 0.1}) {
      const Attrs attrs{{"label_smoothing", smoothing}};
      check({"SoftmaxCrossEntropy", {logits, labels}, attrs});
      check({"SoftmaxCrossEntropyGrad", {input({}, ++seed, 0.5f, 2.0f), logits, labels}, attrs});
    }
  }
  // [N, S, C] logits, rows split over the pool; large logits shift exactly.
  const Operand logits = input({4, 64, 500}, 1, 990.0f, 1000.0f);
  const Operand labels = int64s({4, 64}, random_labels(gen, 256, 500, 5));
  check({"SoftmaxCrossEntropy", {logits, labels}});
  check({"SoftmaxCrossEntropyGrad", {values({}, {1.0f}), logits, labels}});
}

TEST_CASE("cpu SoftmaxCrossEntropy rejects a label outside the classes", "[ops][cpu][grad]") {
  for (const char* op : {"SoftmaxCrossEntropy", "SoftmaxCrossEntropyGrad"}) {
    OpCase c{op, {input({3, 4}, 1), int64s({3}, {0, 4, 1})}};
    if (std::string(op) == "SoftmaxCrossEntropyGrad") c.inputs.insert(c.inputs.begin(), values({}, {1.0f}));
    BoundCase cpu = BoundCase::open(c, kCpu);
    CHECK(cpu.backend_of(op) == kCpu);
    const Status s = cpu.try_infer();
    CHECK_FALSE(s.is_ok());
    CHECK(s.message().find("label 4") != std::string::npos);
  }
}

TEST_CASE("cpu SgdUpdate and AdamUpdate match ref", "[ops][cpu][optimizer]") {
  std::mt19937 gen(21);
  uint32_t seed = 2100;
  const Attrs cosine{{"schedule", std::string("cosine")}, {"warmup_steps", int64_t{2}}, {"total_steps", int64_t{10}}};
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape{random_dim(gen, 1, 7), random_dim(gen, 1, 300)};
    check(update_case("SgdUpdate", shape, 1, 0, false, {{"lr", 0.3}}, seed += 5));
    check(update_case("SgdUpdate", shape, 3, 0, true, {{"lr", 0.3}, {"weight_decay", 0.1}}, seed += 5));
    check(update_case("SgdUpdate", shape, 2, 1, false, {{"lr", 0.3}, {"momentum", 0.9}}, seed += 5));
    check(update_case("SgdUpdate", shape, 5, 1, true,
                      {{"lr", 0.3}, {"momentum", 0.9}, {"nesterov", int64_t{1}}, {"weight_decay", 0.01}}, seed += 5));
    // Gradient accumulation: step 4 of accumulation 2 updates (and clears the accumulator),
    // step 3 only accumulates.
    check(update_case("SgdUpdate", shape, 4, 1, false, {{"lr", 0.3}, {"momentum", 0.5}, {"accumulation", int64_t{2}}},
                      seed += 5));
    check(update_case("SgdUpdate", shape, 3, 1, false, {{"lr", 0.3}, {"momentum", 0.5}, {"accumulation", int64_t{2}}},
                      seed += 5));
    Attrs sgd_cosine = cosine;
    sgd_cosine.set("lr", 0.5);
    check(update_case("SgdUpdate", shape, 7, 0, false, sgd_cosine, seed += 5));

    check(update_case("AdamUpdate", shape, 1, 2, false, {{"lr", 0.1}}, seed += 5));
    check(update_case("AdamUpdate", shape, 6, 2, true, {{"lr", 0.1}, {"weight_decay", 0.1}}, seed += 5));
    check(update_case("AdamUpdate", shape, 3, 2, false,
                      {{"lr", 0.1}, {"weight_decay", 0.1}, {"decoupled", int64_t{1}}, {"beta1", 0.8}, {"eps", 1e-6}},
                      seed += 5));
    check(update_case("AdamUpdate", shape, 6, 2, true, {{"lr", 0.1}, {"accumulation", int64_t{3}}}, seed += 5));
    Attrs adam_cosine = cosine;
    adam_cosine.set("lr", 0.1);
    check(update_case("AdamUpdate", shape, 2, 2, false, adam_cosine, seed += 5));
  }
  // Partial-channel updates: the gradient and state cover the first rows only.
  for (int64_t rows : {1, 3}) {
    check(update_case("SgdUpdate", {5, 37}, 2, 1, false, {{"lr", 0.3}, {"momentum", 0.9}}, seed += 5, rows));
    check(update_case("SgdUpdate", {5, 37}, 1, 0, true, {{"lr", 0.3}, {"weight_decay", 0.1}}, seed += 5, rows));
    check(update_case("AdamUpdate", {5, 37}, 3, 2, false, {{"lr", 0.1}, {"weight_decay", 0.1}}, seed += 5, rows));
  }
  // Large enough for the thread pool.
  check(update_case("AdamUpdate", {300, 257}, 4, 2, false,
                    {{"lr", 0.1}, {"decoupled", int64_t{1}}, {"weight_decay", 0.05}}, 1));
  check(update_case("SgdUpdate", {70000}, 2, 1, false, {{"lr", 0.3}, {"momentum", 0.9}}, 2));
}

TEST_CASE("cpu AccumulateGrad and GlobalNormClipScale match ref", "[ops][cpu][optimizer]") {
  std::mt19937 gen(22);
  uint32_t seed = 2200;
  for (int trial = 0; trial < 3; ++trial) {
    const Shape shape{random_dim(gen, 1, 7), random_dim(gen, 1, 300)};
    OpCase acc{"AccumulateGrad", {input(shape, ++seed), input(shape, ++seed)}};
    acc.updated_inputs = {0};
    check(acc);
    // Norms above and below max_norm: the clamp to 1 and the scaled case.
    for (double max_norm : {0.5, 1e4}) {
      check({"GlobalNormClipScale",
             {input(shape, ++seed), input({random_dim(gen, 1, 50)}, ++seed), input({}, ++seed)},
             {{"max_norm", max_norm}, {"grad_scale", 0.5}}});
    }
  }
  check({"GlobalNormClipScale", {input({100000}, 1)}, {{"max_norm", 1.0}}});
}
