// ConvTranspose2d: forward against the scatter that defines a transposed convolution (written out
// here: each input pixel adds x * w to the output pixels its taps reach), gradients for x and w
// against central finite differences, the schema's refusals, and the cpu kernels against ref.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"
#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

struct Geometry {
  int64_t n, cin, h, w, cout_per_group, kh, kw, groups;
  Ints strides, pads, dilations, output_padding;

  Shape x() const { return {n, cin, h, w}; }
  Shape weight() const { return {cin, cout_per_group, kh, kw}; }
  int64_t out_h() const { return strides[0] * (h - 1) + output_padding[0] + dilations[0] * (kh - 1) + 1 - pads[0] - pads[2]; }
  int64_t out_w() const { return strides[1] * (w - 1) + output_padding[1] + dilations[1] * (kw - 1) + 1 - pads[1] - pads[3]; }
  Shape y() const { return {n, cout_per_group * groups, out_h(), out_w()}; }
  Attrs attrs() const {
    return Attrs{{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"groups", groups},
                 {"output_padding", output_padding}};
  }
};

// y[n, g M + m, i s - p + k d] += x[n, c, i] w[c, m, k] for every input channel c of group g.
std::vector<double> scatter(const Geometry& g, const std::vector<float>& x, const std::vector<float>& w) {
  const Shape y = g.y();
  std::vector<double> out(static_cast<size_t>(numel(y)), 0.0);
  const int64_t cin_per_group = g.cin / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.cin; ++c) {
      for (int64_t m = 0; m < g.cout_per_group; ++m) {
        const int64_t co = (c / cin_per_group) * g.cout_per_group + m;
        for (int64_t iy = 0; iy < g.h; ++iy) {
          for (int64_t ix = 0; ix < g.w; ++ix) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t oy = iy * g.strides[0] - g.pads[0] + ky * g.dilations[0];
                const int64_t ox = ix * g.strides[1] - g.pads[1] + kx * g.dilations[1];
                if (oy < 0 || oy >= y[2] || ox < 0 || ox >= y[3]) continue;
                out[static_cast<size_t>(((n * y[1] + co) * y[2] + oy) * y[3] + ox)] +=
                    static_cast<double>(x[static_cast<size_t>(((n * g.cin + c) * g.h + iy) * g.w + ix)]) *
                    w[static_cast<size_t>(((c * g.cout_per_group + m) * g.kh + ky) * g.kw + kx)];
              }
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Geometry> geometries() {
  return {
      {2, 3, 4, 5, 2, 3, 3, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}},
      {1, 4, 3, 4, 3, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}},  // PyTorch's usual 2x upsampling
      {2, 4, 5, 3, 1, 2, 3, 2, {2, 1}, {0, 1, 1, 0}, {1, 2}, {1, 0}},  // groups, dilation, uneven pads
      {1, 6, 4, 4, 1, 3, 3, 6, {2, 2}, {1, 1, 0, 0}, {1, 1}, {0, 1}},  // depthwise
  };
}

}  // namespace

TEST_CASE("ConvTranspose2d is the scatter of x * w over the taps", "[ops][conv]") {
  uint32_t seed = 700;
  for (const Geometry& g : geometries()) {
    const std::vector<float> x = random_floats(static_cast<size_t>(numel(g.x())), ++seed, -1.0f, 1.0f);
    const std::vector<float> w = random_floats(static_cast<size_t>(numel(g.weight())), ++seed, -1.0f, 1.0f);
    auto out = run_op("ConvTranspose2d", {HostTensor::f32(g.x(), x), HostTensor::f32(g.weight(), w)}, g.attrs());
    INFO(shape_str(g.x()) << " * " << shape_str(g.weight()));
    REQUIRE(out.is_ok());
    REQUIRE(out.value()[0].shape == g.y());
    CHECK(mismatches(out.value()[0].f32(), scatter(g, x, w), 1e-5, 1e-6) == "");
  }
}

TEST_CASE("ConvTranspose2d refuses output_padding that reaches the stride and weights of the wrong shape",
          "[ops][conv][errors]") {
  const HostTensor x = HostTensor::f32({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  auto padding = run_op("ConvTranspose2d", {x, HostTensor::f32({2, 1, 3, 3}, std::vector<float>(18, 1.0f))},
                        {{"strides", Ints{2, 2}}, {"output_padding", Ints{2, 0}}});
  REQUIRE_FALSE(padding.is_ok());
  CHECK_THAT(padding.status().message(), Catch::Contains("output_padding"));
  auto weight = run_op("ConvTranspose2d", {x, HostTensor::f32({3, 1, 3, 3}, std::vector<float>(27, 1.0f))}, {});
  REQUIRE_FALSE(weight.is_ok());
  CHECK_THAT(weight.status().message(), Catch::Contains("[Cin, Cout/groups, kh, kw]"));
}

TEST_CASE("ConvTranspose2d gradients for x and w match finite differences", "[grad][conv]") {
  uint32_t seed = 800;
  for (const Geometry& g : geometries()) {
    INFO(shape_str(g.x()) << " * " << shape_str(g.weight()));
    const HostTensor x = HostTensor::f32(g.x(), random_floats(static_cast<size_t>(numel(g.x())), ++seed, -1.0f, 1.0f));
    const HostTensor w = HostTensor::f32(g.weight(), random_floats(static_cast<size_t>(numel(g.weight())), ++seed, -1.0f, 1.0f));
    CHECK(check_op_gradients("ConvTranspose2d", {x, w}, g.attrs(), {true, true}));
  }
}

TEST_CASE("cpu ConvTranspose2d matches ref, with trained and frozen weights", "[ops][cpu][conv]") {
  uint32_t seed = 900;
  for (const Geometry& g : geometries()) {
    INFO(shape_str(g.x()) << " * " << shape_str(g.weight()));
    check_against_ref("cpu", {"ConvTranspose2d", {input(g.x(), ++seed), input(g.weight(), ++seed)}, g.attrs()}, "cpu");
    check_against_ref("cpu", {"ConvTranspose2d", {input(g.x(), ++seed), frozen(g.weight(), ++seed)}, g.attrs()}, "cpu");
  }
  const Geometry large{4, 32, 16, 16, 16, 4, 4, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, {0, 0}};  // the thread pool
  check_against_ref("cpu", {"ConvTranspose2d", {input(large.x(), 1), input(large.weight(), 2)}, large.attrs()}, "cpu");
}
