// ONNX Conv over three spatial axes (PyTorch's Conv3d): imported as 2-D convolutions per depth
// tap. Expected values come from the convolution's definition, summed in loops here.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using namespace pock::testing;

namespace {

using Ints = std::vector<int64_t>;

struct Conv3dCase {
  Ints x, w;  // [N, C, D, H, W], [M, C/group, kd, kh, kw]
  Ints strides, dilations, pads;
  int64_t group;
  bool bias;
};

std::vector<float> values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 7) % 11) - 5);
  return v;
}

size_t count(const Ints& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

// y[n, m, o] = bias[m] + sum over the group's channels and the kernel of x at o * stride - pad +
// k * dilation (zero outside) times w.
std::vector<float> reference(const Conv3dCase& t, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, Ints* y_dims) {
  const int64_t m_count = t.w[0], c_per_group = t.w[1], m_per_group = m_count / t.group;
  Ints out(3);
  for (int a = 0; a < 3; ++a) {
    out[a] = (t.x[2 + a] + t.pads[a] + t.pads[a + 3] - ((t.w[2 + a] - 1) * t.dilations[a] + 1)) / t.strides[a] + 1;
  }
  *y_dims = {t.x[0], m_count, out[0], out[1], out[2]};
  std::vector<float> y;
  for (int64_t n = 0; n < t.x[0]; ++n) {
    for (int64_t m = 0; m < m_count; ++m) {
      for (int64_t od = 0; od < out[0]; ++od) {
        for (int64_t oh = 0; oh < out[1]; ++oh) {
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double acc = t.bias ? b[m] : 0.0;
            for (int64_t ci = 0; ci < c_per_group; ++ci) {
              const int64_t c = (m / m_per_group) * c_per_group + ci;
              for (int64_t kd = 0; kd < t.w[2]; ++kd) {
                for (int64_t kh = 0; kh < t.w[3]; ++kh) {
                  for (int64_t kw = 0; kw < t.w[4]; ++kw) {
                    const std::array<int64_t, 3> o{od, oh, ow}, k{kd, kh, kw};
                    std::array<int64_t, 3> i{};
                    bool inside = true;
                    for (int a = 0; a < 3; ++a) {
                      i[a] = o[a] * t.strides[a] - t.pads[a] + k[a] * t.dilations[a];
                      inside = inside && i[a] >= 0 && i[a] < t.x[2 + a];
                    }
                    if (!inside) continue;
                    const int64_t xi = (((n * t.x[1] + c) * t.x[2] + i[0]) * t.x[3] + i[1]) * t.x[4] + i[2];
                    const int64_t wi = (((m * c_per_group + ci) * t.w[2] + kd) * t.w[3] + kh) * t.w[4] + kw;
                    acc += static_cast<double>(x[xi]) * w[wi];
                  }
                }
              }
            }
            y.push_back(static_cast<float>(acc));
          }
        }
      }
    }
  }
  return y;
}

void check_conv3d(const Conv3dCase& t) {
  const std::vector<float> x = values(count(t.x), 0.25f), w = values(count(t.w), 0.1f), b = values(t.w[0], 0.5f);
  OnnxModel m(17);
  m.input("x", t.x);
  m.floats("w", t.w, w);
  std::vector<std::string> inputs{"x", "w"};
  if (t.bias) {
    m.floats("b", {t.w[0]}, b);
    inputs.push_back("b");
  }
  auto& conv = m.node("Conv", inputs, {"y"}, "conv3d");
  OnnxModel::attr(conv, "strides", t.strides);
  OnnxModel::attr(conv, "dilations", t.dilations);
  OnnxModel::attr(conv, "pads", t.pads);
  OnnxModel::attr(conv, "group", t.group);
  m.output("y");
  auto model = open_model(m);
  REQUIRE(model->engine->set_input("x", x).is_ok());
  REQUIRE(model->engine->infer().is_ok());
  Ints y_dims;
  const std::vector<float> want = reference(t, x, w, b, &y_dims);
  auto info = model->engine->info("y");
  REQUIRE(info.is_ok());
  CHECK(Ints(info->dims, info->dims + info->rank) == y_dims);
  auto y = model->engine->output<float>("y");
  REQUIRE(y.is_ok());
  REQUIRE(y->size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK((*y)[i] == Approx(want[i]).epsilon(1e-5).margin(1e-5));
}

}  // namespace

TEST_CASE("Conv over 3 spatial axes: one 2-D convolution per depth tap, summed", "[onnx][conv]") {
  SECTION("plain") { check_conv3d({{2, 3, 4, 5, 4}, {2, 3, 3, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 1, true}); }
  SECTION("depth stride, dilation and pads; groups; no bias") {
    check_conv3d({{1, 4, 7, 4, 5}, {4, 2, 2, 3, 2}, {2, 1, 2}, {2, 1, 1}, {1, 1, 0, 2, 0, 1}, 2, false});
  }
  SECTION("every axis strided and dilated, with bias") {
    check_conv3d({{1, 2, 6, 6, 6}, {3, 2, 2, 2, 2}, {2, 2, 2}, {2, 2, 1}, {1, 0, 1, 0, 1, 1}, 1, true});
  }
}

TEST_CASE("Conv over 3 spatial axes refuses a kernel deeper than the padded input", "[onnx][conv]") {
  OnnxModel m(17);
  m.input("x", {1, 1, 2, 3, 3});
  m.floats("w", {1, 1, 3, 1, 1}, {1, 1, 1});
  m.node("Conv", {"x", "w"}, {"y"}, "deep");
  m.output("y");
  const std::string msg = import_error(m);
  CHECK(msg.find("'deep'") != std::string::npos);
  CHECK(msg.find("depth") != std::string::npos);
}
