// Conv family gradients. The backward kernels are checked against independent computations:
// linear ops through the adjoint identity <dy, f(x)> = <f^T(dy), x> with the forward kernel as f,
// max pooling against a window scan written here, and small hand-computed cases. The rules are
// checked end to end (autodiff, compile, run) against finite differences (support/grad_check.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double sum_abs_products(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(static_cast<double>(a[i]) * b[i]);
  return s;
}

std::vector<float> run1(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs) {
  auto out = run_op(op, inputs, attrs);
  INFO(op << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  return out.value()[0].f32();
}

Shape run_shape(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs) {
  auto out = run_op(op, inputs, attrs);
  INFO(op << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  return out.value()[0].shape;
}

struct ConvCase {
  const char* name;
  Ints x;  // N, C, H, W
  int64_t out_channels, kh, kw;
  Ints strides, pads, dilations;
  int64_t groups;
};

const ConvCase kConvCases[] = {
    {"plain 3x3", {2, 3, 6, 5}, 4, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
    {"strided, asymmetric pads, dilated, non-square", {2, 3, 7, 6}, 4, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 1},
    {"groups", {1, 4, 5, 5}, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
    {"depthwise strided", {2, 3, 6, 5}, 3, 3, 3, {2, 2}, {0, 1, 1, 0}, {1, 1}, 3},
    {"depthwise multiplier, dilated", {1, 2, 7, 7}, 4, 2, 3, {1, 2}, {2, 1, 0, 2}, {2, 2}, 2},
    {"1x1 stride 2 skips pixels", {1, 2, 5, 4}, 3, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},
};

Attrs conv_attrs(const ConvCase& k) {
  return Attrs{{"strides", k.strides}, {"pads", k.pads}, {"dilations", k.dilations}, {"groups", k.groups}};
}

Attrs with(Attrs attrs, const char* name, AttrValue value) {
  attrs.set(name, std::move(value));
  return attrs;
}

}  // namespace

TEST_CASE("Conv2dGradInput and Conv2dGradWeight are the adjoints of Conv2d", "[ops][grad][conv]") {
  uint32_t seed = 1;
  for (const ConvCase& k : kConvCases) {
    SECTION(k.name) {
      const Ints w_shape{k.out_channels, k.x[1] / k.groups, k.kh, k.kw};
      const HostTensor x = HostTensor::f32(k.x, random_floats(numel(k.x), seed++));
      const HostTensor w = HostTensor::f32(w_shape, random_floats(numel(w_shape), seed++));
      const Attrs attrs = conv_attrs(k);
      const std::vector<float> y = run1("Conv2d", {x, w}, attrs);
      const Shape y_shape = run_shape("Conv2d", {x, w}, attrs);
      const HostTensor dy = HostTensor::f32(y_shape, random_floats(numel(y_shape), seed++));
      const double forward = dot(dy.f32(), y);
      const double scale = sum_abs_products(dy.f32(), y) + 1.0;

      const std::vector<float> dx = run1("Conv2dGradInput", {dy, w}, with(attrs, "input_shape", k.x));
      REQUIRE(dx.size() == x.f32().size());
      CHECK(dot(dx, x.f32()) == Approx(forward).margin(1e-5 * scale));

      const std::vector<float> dw = run1("Conv2dGradWeight", {x, dy}, with(attrs, "kernel", Ints{k.kh, k.kw}));
      REQUIRE(dw.size() == w.f32().size());
      CHECK(dot(dw, w.f32()) == Approx(forward).margin(1e-5 * scale));

      // Partial-channel updates: the first output channels' rows of the full weight gradient.
      Attrs partial = with(with(attrs, "kernel", Ints{k.kh, k.kw}), "channels", int64_t{k.out_channels - 1});
      auto part = run_op("Conv2dGradWeight", {x, dy}, partial);
      REQUIRE(part.is_ok());
      CHECK(part.value()[0].shape == Shape{k.out_channels - 1, w_shape[1], k.kh, k.kw});
      // Equal up to summation order: a GEMM of fewer rows may take another OpenBLAS kernel.
      const std::vector<float> leading(dw.begin(), dw.begin() + static_cast<int64_t>(part.value()[0].f32().size()));
      const std::vector<float>& got = part.value()[0].f32();
      REQUIRE(got.size() == leading.size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(leading[i]).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("Conv2dGradInput of a 2x2 all-ones filter counts the windows over each pixel", "[ops][grad][conv]") {
  const HostTensor dy = HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const HostTensor w = HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const std::vector<float> dx = run1("Conv2dGradInput", {dy, w}, Attrs{{"input_shape", Ints{1, 1, 3, 3}}});
  CHECK(dx == std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1});
}

TEST_CASE("Conv2dGradWeight of a single pixel picks the input under each tap", "[ops][grad][conv]") {
  // x = 0..8 on 3x3, pads 1 on every side, one output pixel at (1, 1) carries the gradient: each
  // tap (ky, kx) of a 3x3 filter saw x[ky, kx].
  std::vector<float> xs(9);
  for (int i = 0; i < 9; ++i) xs[i] = static_cast<float>(i);
  std::vector<float> dys(9, 0.0f);
  dys[4] = 2.0f;
  const std::vector<float> dw =
      run1("Conv2dGradWeight", {HostTensor::f32({1, 1, 3, 3}, xs), HostTensor::f32({1, 1, 3, 3}, dys)},
           Attrs{{"pads", Ints{1, 1, 1, 1}}, {"kernel", Ints{3, 3}}});
  CHECK(dw == std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14, 16});
}

TEST_CASE("Conv2dGradBias sums dy per output channel", "[ops][grad][conv]") {
  const Shape shape{2, 3, 2, 2};
  const std::vector<float> dy = random_floats(numel(shape), 7);
  std::vector<double> want(3, 0.0);
  for (size_t i = 0; i < dy.size(); ++i) want[(i / 4) % 3] += dy[i];
  CHECK(mismatches(run1("Conv2dGradBias", {HostTensor::f32(shape, dy)}, {}), want) == "");
  std::vector<double> leading(want.begin(), want.begin() + 2);
  CHECK(mismatches(run1("Conv2dGradBias", {HostTensor::f32(shape, dy)}, Attrs{{"channels", int64_t{2}}}), leading) ==
        "");
}

namespace {

struct PoolCase {
  const char* name;
  Ints x, kernel, strides, pads;
  int64_t ceil_mode;
};

const PoolCase kPoolCases[] = {
    {"2x2 stride 2", {2, 2, 4, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0},
    {"overlapping 3x3 stride 1", {1, 2, 5, 5}, {3, 3}, {1, 1}, {0, 0, 0, 0}, 0},
    {"asymmetric pads, non-square", {1, 3, 6, 5}, {3, 2}, {2, 1}, {1, 0, 2, 1}, 0},
    {"ceil mode", {2, 1, 7, 6}, {3, 3}, {2, 2}, {1, 1, 0, 0}, 1},
};

Attrs pool_attrs(const PoolCase& p) {
  return Attrs{{"kernel", p.kernel}, {"strides", p.strides}, {"pads", p.pads}, {"ceil_mode", p.ceil_mode}};
}

// Max pooling's gradient by definition: each window's dy goes to the first of its largest inputs.
std::vector<double> naive_max_pool_grad(const PoolCase& p, const std::vector<float>& x, const Shape& y_shape,
                                        const std::vector<float>& dy) {
  const int64_t h = p.x[2], w = p.x[3];
  std::vector<double> dx(x.size(), 0.0);
  for (int64_t plane = 0; plane < p.x[0] * p.x[1]; ++plane) {
    for (int64_t oy = 0; oy < y_shape[2]; ++oy) {
      for (int64_t ox = 0; ox < y_shape[3]; ++ox) {
        int64_t best = -1;
        for (int64_t ky = 0; ky < p.kernel[0]; ++ky) {
          for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
            const int64_t iy = oy * p.strides[0] - p.pads[0] + ky, ix = ox * p.strides[1] - p.pads[1] + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const int64_t at = plane * h * w + iy * w + ix;
            if (best < 0 || x[at] > x[best]) best = at;
          }
        }
        dx[best] += dy[(plane * y_shape[2] + oy) * y_shape[3] + ox];
      }
    }
  }
  return dx;
}

}  // namespace

TEST_CASE("MaxPool2dGrad routes dy to each window's maximum", "[ops][grad][conv]") {
  uint32_t seed = 100;
  for (const PoolCase& p : kPoolCases) {
    SECTION(p.name) {
      const HostTensor x = HostTensor::f32(p.x, random_floats(numel(p.x), seed++));  // distinct values: no ties
      const Shape y_shape = run_shape("MaxPool2d", {x}, pool_attrs(p));
      const HostTensor dy = HostTensor::f32(y_shape, random_floats(numel(y_shape), seed++));
      const std::vector<float> dx = run1("MaxPool2dGrad", {dy, x}, pool_attrs(p));
      CHECK(mismatches(dx, naive_max_pool_grad(p, x.f32(), y_shape, dy.f32())) == "");
    }
  }
}

TEST_CASE("MaxPool2dGrad gives a tied window's gradient to its first maximum", "[ops][grad][conv]") {
  const HostTensor x = HostTensor::f32({1, 1, 2, 2}, {5, 5, 5, 5});
  const HostTensor dy = HostTensor::f32({1, 1, 1, 1}, {3});
  CHECK(run1("MaxPool2dGrad", {dy, x}, Attrs{{"kernel", Ints{2, 2}}}) == std::vector<float>{3, 0, 0, 0});
}

TEST_CASE("AvgPool2dGrad is the adjoint of AvgPool2d", "[ops][grad][conv]") {
  uint32_t seed = 200;
  for (const PoolCase& p : kPoolCases) {
    for (int64_t include_pad : {0, 1}) {
      DYNAMIC_SECTION(p.name << ", count_include_pad=" << include_pad) {
        const Attrs attrs = with(pool_attrs(p), "count_include_pad", include_pad);
        const HostTensor x = HostTensor::f32(p.x, random_floats(numel(p.x), seed++));
        const Shape y_shape = run_shape("AvgPool2d", {x}, attrs);
        const std::vector<float> y = run1("AvgPool2d", {x}, attrs);
        const HostTensor dy = HostTensor::f32(y_shape, random_floats(numel(y_shape), seed++));
        const std::vector<float> dx = run1("AvgPool2dGrad", {dy}, with(attrs, "input_shape", p.x));
        REQUIRE(dx.size() == x.f32().size());
        CHECK(dot(dx, x.f32()) == Approx(dot(dy.f32(), y)).margin(1e-5 * (sum_abs_products(dy.f32(), y) + 1.0)));
      }
    }
  }
}

TEST_CASE("AvgPool2dGrad divides by the real elements unless padding counts", "[ops][grad][conv]") {
  // 2x2 input, 2x2 kernel, stride 2, one pad row on top: the single window holds the top row of
  // the input and one padding row.
  const HostTensor dy = HostTensor::f32({1, 1, 1, 1}, {6});
  const Attrs base{
      {"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 0, 0}}, {"input_shape", Ints{1, 1, 2, 2}}};
  CHECK(run1("AvgPool2dGrad", {dy}, base) == std::vector<float>{3, 3, 0, 0});
  CHECK(run1("AvgPool2dGrad", {dy}, with(base, "count_include_pad", int64_t{1})) ==
        std::vector<float>{1.5f, 1.5f, 0, 0});
}

TEST_CASE("Conv backward schemas reject attributes that disagree with dy", "[ops][grad][conv]") {
  const HostTensor dy = HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const HostTensor w = HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1});
  // A 4x4 input would give a 3x3 output, not dy's 2x2.
  auto wrong = run_op("Conv2dGradInput", {dy, w}, Attrs{{"input_shape", Ints{1, 1, 4, 4}}});
  CHECK(wrong.status().code() == Code::kShapeMismatch);
  auto too_many = run_op("Conv2dGradBias", {dy}, Attrs{{"channels", int64_t{2}}});
  CHECK(too_many.status().code() == Code::kInvalidArgument);
}

// ---- Gradient rules, end to end through autodiff, against finite differences ----------------

namespace {

// Values spaced 0.1 apart in a shuffled order: no two inputs of a max window are within the
// finite-difference step of each other, so perturbing one never changes which is the maximum.
std::vector<float> spaced_values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i - n / 2);
  std::mt19937 gen(seed);
  std::shuffle(v.begin(), v.end(), gen);
  return v;
}

}  // namespace

TEST_CASE("Conv2d gradients match finite differences", "[ops][grad][conv][fd]") {
  uint32_t seed = 300;
  for (const ConvCase& k : kConvCases) {
    for (bool bias : {true, false}) {
      DYNAMIC_SECTION(k.name << (bias ? " with bias" : " without bias")) {
        const Ints w_shape{k.out_channels, k.x[1] / k.groups, k.kh, k.kw};
        std::vector<HostTensor> inputs{HostTensor::f32(k.x, random_floats(numel(k.x), seed++)),
                                       HostTensor::f32(w_shape, random_floats(numel(w_shape), seed++))};
        if (bias) inputs.push_back(HostTensor::f32({k.out_channels}, random_floats(k.out_channels, seed++)));
        CHECK(check_op_gradients("Conv2d", inputs, conv_attrs(k), {true, true, true}));
      }
    }
  }
}

TEST_CASE("Pool gradients match finite differences", "[ops][grad][conv][fd]") {
  uint32_t seed = 400;
  for (const PoolCase& p : kPoolCases) {
    DYNAMIC_SECTION("MaxPool2d " << p.name) {
      CHECK(check_op_gradients("MaxPool2d", {HostTensor::f32(p.x, spaced_values(numel(p.x), seed++))}, pool_attrs(p),
                               {true}));
    }
    for (int64_t include_pad : {0, 1}) {
      DYNAMIC_SECTION("AvgPool2d " << p.name << ", count_include_pad=" << include_pad) {
        CHECK(check_op_gradients("AvgPool2d", {HostTensor::f32(p.x, random_floats(numel(p.x), seed++))},
                                 with(pool_attrs(p), "count_include_pad", include_pad), {true}));
      }
    }
  }
  SECTION("GlobalAvgPool") {
    const Shape shape{2, 3, 4, 5};
    CHECK(check_op_gradients("GlobalAvgPool", {HostTensor::f32(shape, random_floats(numel(shape), 9))}, {}, {true}));
  }
}
