// Conv family: Conv2d, MaxPool2d, AvgPool2d, GlobalAvgPool against loops written here (over an
// explicitly padded copy of the input, unlike the kernels) and hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "ir/op_schema.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

// A [N, C, H, W] tensor with `pad` rows/columns of `fill` added on each side.
struct Padded {
  int64_t n, c, h, w;
  std::vector<double> v;
  double at(int64_t ni, int64_t ci, int64_t y, int64_t x) const { return v[((ni * c + ci) * h + y) * w + x]; }
};

Padded pad_nchw(const std::vector<float>& x, const Ints& shape, const Ints& pads, double fill) {
  Padded p{shape[0], shape[1], shape[2] + pads[0] + pads[2], shape[3] + pads[1] + pads[3], {}};
  p.v.assign(static_cast<size_t>(p.n * p.c * p.h * p.w), fill);
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t c = 0; c < shape[1]; ++c)
      for (int64_t y = 0; y < shape[2]; ++y)
        for (int64_t xx = 0; xx < shape[3]; ++xx)
          p.v[((n * p.c + c) * p.h + y + pads[0]) * p.w + xx + pads[1]] =
              x[((n * shape[1] + c) * shape[2] + y) * shape[3] + xx];
  return p;
}

struct ConvCase {
  Ints x_shape;  // N, C, H, W
  int64_t out_channels, kh, kw;
  Ints strides, pads, dilations;
  int64_t groups;
  bool bias;
};

// Direct definition: y[n,o,i,j] = b[o] + sum over the group's channels and taps of
// xpad[n, c, i*s + ky*d, j*s + kx*d] * w[o, c - group_start, ky, kx].
std::vector<float> naive_conv(const ConvCase& k, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b, Ints* out_shape) {
  const Padded xp = pad_nchw(x, k.x_shape, k.pads, 0.0);
  const int64_t oh = (xp.h - k.dilations[0] * (k.kh - 1) - 1) / k.strides[0] + 1;
  const int64_t ow = (xp.w - k.dilations[1] * (k.kw - 1) - 1) / k.strides[1] + 1;
  const int64_t cg = k.x_shape[1] / k.groups, og = k.out_channels / k.groups;
  *out_shape = {k.x_shape[0], k.out_channels, oh, ow};
  std::vector<float> y;
  for (int64_t n = 0; n < xp.n; ++n)
    for (int64_t o = 0; o < k.out_channels; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = k.bias ? b[o] : 0.0;
          const int64_t group = o / og;
          for (int64_t cl = 0; cl < cg; ++cl)
            for (int64_t ky = 0; ky < k.kh; ++ky)
              for (int64_t kx = 0; kx < k.kw; ++kx)
                acc += xp.at(n, group * cg + cl, i * k.strides[0] + ky * k.dilations[0],
                             j * k.strides[1] + kx * k.dilations[1]) *
                       w[((o * cg + cl) * k.kh + ky) * k.kw + kx];
          y.push_back(static_cast<float>(acc));
        }
  return y;
}

void check_conv(const ConvCase& k, uint32_t seed) {
  const int64_t cg = k.x_shape[1] / k.groups;
  const Ints w_shape{k.out_channels, cg, k.kh, k.kw};
  const auto x = random_floats(static_cast<size_t>(numel(k.x_shape)), seed);
  const auto w = random_floats(static_cast<size_t>(numel(w_shape)), seed + 1);
  const auto b = random_floats(static_cast<size_t>(k.out_channels), seed + 2);
  Ints expected_shape;
  const auto expected = naive_conv(k, x, w, b, &expected_shape);
  std::vector<HostTensor> inputs{HostTensor::f32(k.x_shape, x), HostTensor::f32(w_shape, w)};
  if (k.bias) inputs.push_back(HostTensor::f32({k.out_channels}, b));
  Attrs attrs{{"strides", k.strides}, {"pads", k.pads}, {"dilations", k.dilations}, {"groups", k.groups}};
  auto out = run_op("Conv2d", inputs, attrs);
  INFO("x " << shape_str(k.x_shape) << " w " << shape_str(w_shape) << " strides " << shape_str(k.strides) << " pads "
            << shape_str(k.pads) << " dilations " << shape_str(k.dilations) << " groups " << k.groups);
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].shape == expected_shape);
  const auto y = out.value()[0].f32();
  REQUIRE(y.size() == expected.size());
  for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
}

std::vector<float> iota(size_t n, float first = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("Conv2d: hand-computed 2x2 box filter", "[ops][conv]") {
  auto out = run_op("Conv2d", {HostTensor::f32({1, 1, 3, 3}, iota(9, 1)), HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                               HostTensor::f32({1}, {0.5f})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{1, 1, 2, 2});
  CHECK(out.value()[0].f32() == std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f});
}

TEST_CASE("Conv2d matches a naive loop on chosen shapes", "[ops][conv]") {
  const std::vector<ConvCase> cases = {
      {{1, 3, 7, 7}, 4, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},    // plain
      {{2, 3, 9, 8}, 5, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true},     // stride 2, same pads
      {{1, 2, 6, 9}, 3, 2, 3, {1, 2}, {0, 2, 1, 0}, {1, 1}, 1, true},     // asymmetric pads, non-square
      {{1, 2, 10, 10}, 2, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, false},  // dilation 2
      {{2, 4, 6, 6}, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, true},     // 2 groups
      {{1, 4, 8, 8}, 4, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 4, true},     // depthwise
      {{1, 3, 7, 5}, 6, 3, 1, {1, 1}, {1, 0, 1, 0}, {1, 1}, 3, false},    // depthwise, multiplier 2
      {{1, 2, 11, 7}, 4, 2, 3, {3, 2}, {1, 0, 2, 1}, {2, 3}, 2, true},    // everything at once
  };
  uint32_t seed = 100;
  for (const ConvCase& k : cases) check_conv(k, seed += 10);
}

TEST_CASE("Conv2d matches a naive loop on random shapes", "[ops][conv]") {
  std::mt19937 gen(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); };
  for (int trial = 0; trial < 25; ++trial) {
    ConvCase k;
    k.groups = pick(1, 3);
    const int64_t cg = pick(1, 3), og = pick(1, 3);
    k.kh = pick(1, 4);
    k.kw = pick(1, 4);
    k.strides = {pick(1, 3), pick(1, 3)};
    k.dilations = {pick(1, 2), pick(1, 2)};
    k.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    const int64_t min_h = k.dilations[0] * (k.kh - 1) + 1, min_w = k.dilations[1] * (k.kw - 1) + 1;
    k.x_shape = {pick(1, 2), cg * k.groups, min_h + pick(0, 6), min_w + pick(0, 6)};
    k.out_channels = og * k.groups;
    k.bias = pick(0, 1) == 1;
    check_conv(k, 1000 + static_cast<uint32_t>(trial) * 3);
  }
}

TEST_CASE("Conv2d shape inference", "[ops][conv][shape]") {
  auto out = infer("Conv2d", {f32({2, 6, 17, 12}), f32({8, 3, 3, 5})},
                   {{"strides", Ints{2, 1}}, {"pads", Ints{1, 2, 0, 2}}, {"dilations", Ints{1, 2}}, {"groups", int64_t{2}}});
  REQUIRE(out.is_ok());
  // H: (17 + 1 + 0 - 3) / 2 + 1 = 8; W: (12 + 2 + 2 - 9) / 1 + 1 = 8
  CHECK(out.value()[0] == f32({2, 8, 8, 8}));
}

TEST_CASE("Conv2d rejects inconsistent shapes and attributes, naming the node", "[ops][conv][errors]") {
  auto groups = infer("Conv2d", {f32({1, 6, 8, 8}), f32({4, 3, 3, 3})}, {{"groups", int64_t{4}}});
  REQUIRE_FALSE(groups.is_ok());
  CHECK_THAT(groups.status().message(), Catch::Contains("the_node") && Catch::Contains("groups"));

  auto channels = infer("Conv2d", {f32({1, 6, 8, 8}), f32({4, 4, 3, 3})}, {});
  REQUIRE_FALSE(channels.is_ok());
  CHECK(channels.status().code() == Code::kShapeMismatch);

  auto bias = infer("Conv2d", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({3})}, {});
  REQUIRE_FALSE(bias.is_ok());
  CHECK_THAT(bias.status().message(), Catch::Contains("bias"));

  auto pads = infer("Conv2d", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"pads", Ints{1, 1}}});
  REQUIRE_FALSE(pads.is_ok());
  CHECK_THAT(pads.status().message(), Catch::Contains("pads"));

  auto stride = infer("Conv2d", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"strides", Ints{0, 1}}});
  CHECK_FALSE(stride.is_ok());

  auto too_small = infer("Conv2d", {f32({1, 3, 2, 8}), f32({4, 3, 3, 3})}, {});
  REQUIRE_FALSE(too_small.is_ok());
  CHECK(too_small.status().code() == Code::kShapeMismatch);

  CHECK_FALSE(infer("Conv2d", {f32({3, 8, 8}), f32({4, 3, 3, 3})}, {}).is_ok());
  CHECK_FALSE(run_op("Conv2d", {HostTensor::f32({1, 3, 8, 8}, std::vector<float>(192)),
                                HostTensor::f32({4, 2, 3, 3}, std::vector<float>(72))})
                  .is_ok());
}

namespace {

struct PoolCase {
  Ints x_shape, kernel, strides, pads;
  bool ceil_mode, count_include_pad;
};

// Pool output extent, PyTorch's ceil_mode rule: drop a last window that starts in the end padding.
int64_t pool_extent(int64_t in, int64_t k, int64_t s, int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  const double exact = static_cast<double>(in + pad_begin + pad_end - k) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad_begin) --out;
  return out;
}

// Windows read an explicitly padded copy; for the average, "is real" comes from a padded 0/1 map
// and "counts under count_include_pad" from whether the position lies inside the declared padding.
void naive_pool(const PoolCase& p, const std::vector<float>& x, bool max, Ints* out_shape, std::vector<float>* y) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t oh = pool_extent(p.x_shape[2], p.kernel[0], p.strides[0], p.pads[0], p.pads[2], p.ceil_mode);
  const int64_t ow = pool_extent(p.x_shape[3], p.kernel[1], p.strides[1], p.pads[1], p.pads[3], p.ceil_mode);
  // Extra room past the end padding for windows that ceil_mode lets run over.
  const Ints room{p.pads[0], p.pads[1], p.pads[2] + p.kernel[0], p.pads[3] + p.kernel[1]};
  const Padded xp = pad_nchw(x, p.x_shape, room, max ? -inf : 0.0);
  const Padded real = pad_nchw(std::vector<float>(x.size(), 1.0f), p.x_shape, room, 0.0);
  *out_shape = {p.x_shape[0], p.x_shape[1], oh, ow};
  y->clear();
  for (int64_t n = 0; n < xp.n; ++n)
    for (int64_t c = 0; c < xp.c; ++c)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double best = -inf, sum = 0.0, count = 0.0;
          for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
            for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
              const int64_t yy = i * p.strides[0] + ky, xx = j * p.strides[1] + kx;
              best = std::max(best, xp.at(n, c, yy, xx));
              sum += xp.at(n, c, yy, xx);
              const bool in_declared_padding = yy < p.x_shape[2] + p.pads[0] + p.pads[2] &&
                                               xx < p.x_shape[3] + p.pads[1] + p.pads[3];
              count += p.count_include_pad ? (in_declared_padding ? 1.0 : 0.0) : real.at(n, c, yy, xx);
            }
          y->push_back(static_cast<float>(max ? best : sum / count));
        }
}

void check_pool(const char* op, const PoolCase& p, uint32_t seed) {
  const auto x = random_floats(static_cast<size_t>(numel(p.x_shape)), seed);
  Ints expected_shape;
  std::vector<float> expected;
  naive_pool(p, x, std::string(op) == "MaxPool2d", &expected_shape, &expected);
  Attrs attrs{{"kernel", p.kernel}, {"strides", p.strides}, {"pads", p.pads},
              {"ceil_mode", int64_t{p.ceil_mode}}, {"count_include_pad", int64_t{p.count_include_pad}}};
  auto out = run_op(op, {HostTensor::f32(p.x_shape, x)}, attrs);
  INFO(op << " x " << shape_str(p.x_shape) << " kernel " << shape_str(p.kernel) << " strides " << shape_str(p.strides)
          << " pads " << shape_str(p.pads) << " ceil " << p.ceil_mode << " include_pad " << p.count_include_pad);
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].shape == expected_shape);
  const auto y = out.value()[0].f32();
  for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-6));
}

}  // namespace

TEST_CASE("MaxPool2d: hand-computed cases", "[ops][conv]") {
  auto plain = run_op("MaxPool2d", {HostTensor::f32({1, 1, 4, 4}, iota(16))}, {{"kernel", Ints{2, 2}}});
  REQUIRE(plain.is_ok());
  CHECK(plain.value()[0].f32() == std::vector<float>{5, 7, 13, 15});

  // 5x5, kernel 2, stride 2, ceil_mode: the last row and column windows hang over the edge.
  auto ceil = run_op("MaxPool2d", {HostTensor::f32({1, 1, 5, 5}, iota(25))},
                     {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  REQUIRE(ceil.is_ok());
  CHECK(ceil.value()[0].shape == Shape{1, 1, 3, 3});
  CHECK(ceil.value()[0].f32() == std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24});

  // All inputs negative: zero padding must never win the max.
  auto negative = run_op("MaxPool2d", {HostTensor::f32({1, 1, 2, 2}, {-4, -3, -2, -1})},
                         {{"kernel", Ints{2, 2}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}});
  REQUIRE(negative.is_ok());
  CHECK(negative.value()[0].f32() == std::vector<float>{-4, -3, -3, -2, -1, -1, -2, -1, -1});
}

TEST_CASE("AvgPool2d: hand-computed padding and ceil cases", "[ops][conv]") {
  const Attrs padded{{"kernel", Ints{2, 2}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}};
  auto exclude = run_op("AvgPool2d", {HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4})}, padded);
  REQUIRE(exclude.is_ok());
  CHECK(exclude.value()[0].f32() == std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});

  Attrs include = padded;
  include.set("count_include_pad", int64_t{1});
  auto inc = run_op("AvgPool2d", {HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4})}, include);
  REQUIRE(inc.is_ok());
  CHECK(inc.value()[0].f32() == std::vector<float>{0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1});

  // 3x3, kernel 2, stride 2, ceil_mode: partial windows divide by what they cover.
  auto ceil = run_op("AvgPool2d", {HostTensor::f32({1, 1, 3, 3}, iota(9, 1))},
                     {{"kernel", Ints{2, 2}}, {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}});
  REQUIRE(ceil.is_ok());
  CHECK(ceil.value()[0].f32() == std::vector<float>{3, 4.5f, 7.5f, 9});
}

TEST_CASE("Pools match a naive loop on chosen shapes", "[ops][conv]") {
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, false},
      {{1, 2, 7, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, false},
      {{1, 2, 7, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, true},
      {{1, 2, 8, 7}, {3, 2}, {2, 3}, {1, 0, 2, 1}, true, false},
      {{1, 2, 8, 7}, {3, 2}, {2, 3}, {1, 0, 2, 1}, true, true},
      {{2, 1, 10, 6}, {4, 3}, {3, 2}, {2, 1, 0, 1}, true, true},
      {{1, 3, 6, 6}, {3, 3}, {1, 1}, {0, 0, 0, 0}, true, false},
  };
  uint32_t seed = 300;
  for (const PoolCase& p : cases) {
    check_pool("MaxPool2d", p, seed += 7);
    check_pool("AvgPool2d", p, seed += 7);
  }
}

TEST_CASE("Pool shape inference and errors", "[ops][conv][shape][errors]") {
  auto strided = infer("MaxPool2d", {f32({1, 4, 9, 9})}, {{"kernel", Ints{3, 3}}});
  REQUIRE(strided.is_ok());
  CHECK(strided.value()[0] == f32({1, 4, 3, 3}));  // strides default to the kernel
  auto ceil = infer("AvgPool2d", {f32({1, 4, 10, 7})},
                    {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  REQUIRE(ceil.is_ok());
  CHECK(ceil.value()[0] == f32({1, 4, 5, 4}));  // ceil(7/2)+1 = 5, ceil(5/2)+1 = 4

  auto missing = infer("MaxPool2d", {f32({1, 4, 9, 9})}, {});
  REQUIRE_FALSE(missing.is_ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("the_node") && Catch::Contains("kernel"));
  auto big_pad = infer("AvgPool2d", {f32({1, 4, 9, 9})}, {{"kernel", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}});
  REQUIRE_FALSE(big_pad.is_ok());
  CHECK_THAT(big_pad.status().message(), Catch::Contains("pads"));
  CHECK_FALSE(infer("MaxPool2d", {f32({1, 4, 2, 9})}, {{"kernel", Ints{3, 3}}}).is_ok());
  CHECK_FALSE(infer("MaxPool2d", {f32({4, 9, 9})}, {{"kernel", Ints{3, 3}}}).is_ok());
  CHECK_FALSE(infer("MaxPool2d", {f32({1, 4, 9, 9})}, {{"kernel", Ints{3, 3}}, {"ceil_mode", int64_t{2}}}).is_ok());
}

TEST_CASE("GlobalAvgPool averages each plane", "[ops][conv]") {
  const Shape shape{2, 3, 5, 4};
  const auto x = random_floats(static_cast<size_t>(numel(shape)), 11);
  auto out = run_op("GlobalAvgPool", {HostTensor::f32(shape, x)});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 3, 1, 1});
  const auto y = out.value()[0].f32();
  for (int64_t p = 0; p < 6; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < 20; ++i) sum += x[p * 20 + i];
    CHECK(y[p] == Approx(sum / 20.0).margin(1e-6));
  }
  auto bad = infer("GlobalAvgPool", {f32({2, 3, 5})}, {});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node"));
}
