// ONNX pooling that the importer writes with other ops: a 3-D window (a 2-D pool over H, W, then
// one over D) and dilated MaxPool and AveragePool (a maximum or a mean of strided slices).
// Expected values come from a direct loop over each window as ONNX defines it, written here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;
using Ints = std::vector<int64_t>;

namespace {

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = static_cast<float>((k * 37) % 23) - 11.0f;  // no monotone order
  return v;
}

void check_near(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(want[k]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("ONNX 3-D MaxPool and AveragePool (padding excluded from the mean) match a direct loop", "[onnx]") {
  const Ints shape{1, 2, 4, 5, 3}, kernel{2, 3, 2}, strides{2, 2, 1}, pads{1, 1, 0, 0, 1, 1};
  const std::vector<float> x = ramp(2 * 4 * 5 * 3);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OnnxModel m;
    m.input("x", shape);
    auto& n = m.node(op, {"x"}, {"y"}, "pool3d");
    OnnxModel::attr(n, "kernel_shape", kernel);
    OnnxModel::attr(n, "strides", strides);
    OnnxModel::attr(n, "pads", pads);
    m.output("y");
    auto g = import_model(m);
    INFO(op << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    std::vector<double> want;
    Ints out(3);
    for (int a = 0; a < 3; ++a) out[a] = (shape[2 + a] + pads[a] + pads[a + 3] - kernel[a]) / strides[a] + 1;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int count = 0;
            for (int64_t i = 0; i < kernel[0]; ++i)
              for (int64_t j = 0; j < kernel[1]; ++j)
                for (int64_t k = 0; k < kernel[2]; ++k) {
                  const int64_t d = od * strides[0] - pads[0] + i, h = oh * strides[1] - pads[1] + j,
                                w = ow * strides[2] - pads[2] + k;
                  if (d < 0 || d >= shape[2] || h < 0 || h >= shape[3] || w < 0 || w >= shape[4]) continue;
                  const double v = x[((c * shape[2] + d) * shape[3] + h) * shape[4] + w];
                  best = std::max(best, v);
                  sum += v;
                  ++count;
                }
            want.push_back(std::string(op) == "MaxPool" ? best : sum / count);
          }
    check_near(infer_one(*g, "x", x, "y"), want);
  }
}

namespace {

struct DilatedCase {
  const char* op;
  int64_t ceil_mode, count_include_pad;
};

// A dilated 2-D pool as ONNX defines it, one window at a time: taps outside the input are left
// out of the maximum and of the mean's sum; the mean divides by the taps inside the input, or
// with count_include_pad by those inside the padded input (ONNX's reference leaves a ceil_mode
// window's taps past the end padding out).
std::vector<double> dilated_pool(const DilatedCase& c, const Ints& shape, const std::vector<float>& x, const Ints& kernel,
                                 const Ints& strides, const Ints& dilations, const Ints& pads) {
  Ints out(2);
  for (int a = 0; a < 2; ++a) {
    const int64_t room = shape[2 + a] + pads[a] + pads[a + 2] - ((kernel[a] - 1) * dilations[a] + 1);
    out[a] = (room + (c.ceil_mode ? strides[a] - 1 : 0)) / strides[a] + 1;
    if (c.ceil_mode && (out[a] - 1) * strides[a] >= shape[2 + a] + pads[a]) --out[a];
  }
  std::vector<double> want;
  for (int64_t oh = 0; oh < out[0]; ++oh)
    for (int64_t ow = 0; ow < out[1]; ++ow) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t count = 0;
      for (int64_t i = 0; i < kernel[0]; ++i)
        for (int64_t j = 0; j < kernel[1]; ++j) {
          const int64_t h = oh * strides[0] - pads[0] + i * dilations[0], w = ow * strides[1] - pads[1] + j * dilations[1];
          const bool inside = h >= 0 && h < shape[2] && w >= 0 && w < shape[3];
          const bool in_padding = h >= -pads[0] && h < shape[2] + pads[2] && w >= -pads[1] && w < shape[3] + pads[3];
          if (inside) {
            best = std::max<double>(best, x[h * shape[3] + w]);
            sum += x[h * shape[3] + w];
          }
          if (c.count_include_pad ? in_padding : inside) ++count;
        }
      want.push_back(std::string(c.op) == "MaxPool" ? best : sum / static_cast<double>(count));
    }
  return want;
}

// One MaxPool or AveragePool node (opset 19) with the window and the case's flags.
OnnxModel dilated_model(const DilatedCase& c, const Ints& shape, const Ints& kernel, const Ints& strides, const Ints& dilations,
                        const Ints& pads) {
  OnnxModel m(19);
  m.input("x", shape);
  auto& n = m.node(c.op, {"x"}, {"y"}, "dilated");
  OnnxModel::attr(n, "kernel_shape", kernel);
  OnnxModel::attr(n, "strides", strides);
  OnnxModel::attr(n, "dilations", dilations);
  OnnxModel::attr(n, "pads", pads);
  OnnxModel::attr(n, "ceil_mode", c.ceil_mode);
  if (std::string(c.op) == "AveragePool") OnnxModel::attr(n, "count_include_pad", c.count_include_pad);
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("ONNX dilated MaxPool and AveragePool with padding and ceil_mode match a direct loop", "[onnx]") {
  // ceil_mode adds a last row of windows (the height's padded 7 leaves 3 past a span of 4, stride 2).
  const Ints shape{1, 1, 6, 7}, kernel{2, 3}, strides{2, 1}, dilations{3, 2}, pads{1, 2, 0, 1};
  const std::vector<float> x = ramp(6 * 7);
  for (const DilatedCase& c : {DilatedCase{"MaxPool", 0, 0}, DilatedCase{"MaxPool", 1, 0}, DilatedCase{"AveragePool", 0, 0},
                               DilatedCase{"AveragePool", 1, 0}, DilatedCase{"AveragePool", 0, 1}, DilatedCase{"AveragePool", 1, 1}}) {
    auto g = import_model(dilated_model(c, shape, kernel, strides, dilations, pads));
    INFO(c.op << " ceil_mode " << c.ceil_mode << " count_include_pad " << c.count_include_pad << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    check_near(infer_one(*g, "x", x, "y"), dilated_pool(c, shape, x, kernel, strides, dilations, pads));
  }
}

TEST_CASE("ONNX 3-D dilated MaxPool and AveragePool with padding and ceil_mode match a direct loop", "[onnx]") {
  // Separable: a dilated pool over H, W, then one over D; ceil_mode adds a last depth window.
  const Ints shape{1, 2, 6, 5, 7}, kernel{2, 2, 3}, strides{2, 1, 2}, dilations{3, 2, 2}, pads{1, 0, 2, 0, 1, 1};
  const std::vector<float> x = ramp(2 * 6 * 5 * 7);
  for (const DilatedCase& c : {DilatedCase{"MaxPool", 0, 0}, DilatedCase{"MaxPool", 1, 0}, DilatedCase{"AveragePool", 1, 0},
                               DilatedCase{"AveragePool", 0, 1}, DilatedCase{"AveragePool", 1, 1}}) {
    auto g = import_model(dilated_model(c, shape, kernel, strides, dilations, pads));
    INFO(c.op << " ceil_mode " << c.ceil_mode << " count_include_pad " << c.count_include_pad << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    Ints out(3);
    for (int a = 0; a < 3; ++a) {
      const int64_t room = shape[2 + a] + pads[a] + pads[a + 3] - ((kernel[a] - 1) * dilations[a] + 1);
      out[a] = (room + (c.ceil_mode ? strides[a] - 1 : 0)) / strides[a] + 1;
      if (c.ceil_mode && (out[a] - 1) * strides[a] >= shape[2 + a] + pads[a]) --out[a];
    }
    std::vector<double> want;
    for (int64_t ch = 0; ch < 2; ++ch)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int64_t count = 0;
            for (int64_t i = 0; i < kernel[0]; ++i)
              for (int64_t j = 0; j < kernel[1]; ++j)
                for (int64_t k = 0; k < kernel[2]; ++k) {
                  const Ints at{od * strides[0] - pads[0] + i * dilations[0], oh * strides[1] - pads[1] + j * dilations[1],
                                ow * strides[2] - pads[2] + k * dilations[2]};
                  bool inside = true, in_padding = true;
                  for (int a = 0; a < 3; ++a) {
                    inside = inside && at[a] >= 0 && at[a] < shape[2 + a];
                    in_padding = in_padding && at[a] >= -pads[a] && at[a] < shape[2 + a] + pads[a + 3];
                  }
                  if (inside) {
                    const double v = x[((ch * shape[2] + at[0]) * shape[3] + at[1]) * shape[4] + at[2]];
                    best = std::max(best, v);
                    sum += v;
                  }
                  if (c.count_include_pad ? in_padding : inside) ++count;
                }
            want.push_back(std::string(c.op) == "MaxPool" ? best : sum / static_cast<double>(count));
          }
    check_near(infer_one(*g, "x", x, "y"), want);
  }
}

TEST_CASE("ONNX MaxPool's argmax indices are flat row-major (or column-major) indices of the first maximum",
          "[onnx]") {
  // x [N=2, C=1, 4, 5] with repeated values, so that windows hold ties (the first one counts).
  const Ints shape{2, 1, 4, 5}, kernel{2, 3}, strides{2, 1}, pads{1, 0, 0, 1};
  std::vector<float> x(2 * 4 * 5);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>((k * 7) % 5);
  for (int64_t order : {0, 1}) {
    OnnxModel m;
    m.input("x", shape);
    auto& n = m.node("MaxPool", {"x"}, {"y", "indices"}, "pool");
    OnnxModel::attr(n, "kernel_shape", kernel);
    OnnxModel::attr(n, "strides", strides);
    OnnxModel::attr(n, "pads", pads);
    OnnxModel::attr(n, "storage_order", order);
    m.output("y").output("indices");
    auto g = import_model(m);
    INFO("storage_order " << order << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    auto compiled = pock::testing::compile_and_open(*g);
    Engine* engine = &*compiled.engine;
    REQUIRE(engine->set_input("x", x).is_ok());
    REQUIRE(engine->infer().is_ok());
    auto y = engine->output<float>("y");
    auto indices = engine->output<int64_t>("indices");
    REQUIRE((y.is_ok() && indices.is_ok()));
    const int64_t ho = (4 + 1 - 2) / 2 + 1, wo = (5 + 1 - 3) / 1 + 1;
    std::vector<double> want_y;
    std::vector<int64_t> want_index;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t oh = 0; oh < ho; ++oh)
        for (int64_t ow = 0; ow < wo; ++ow) {
          double best = -std::numeric_limits<double>::infinity();
          int64_t where = -1;
          for (int64_t i = 0; i < kernel[0]; ++i)
            for (int64_t j = 0; j < kernel[1]; ++j) {
              const int64_t h = oh * strides[0] - pads[0] + i, w = ow * strides[1] - pads[1] + j;
              if (h < 0 || h >= 4 || w < 0 || w >= 5) continue;
              const float v = x[(b * 4 + h) * 5 + w];
              if (v > best) {
                best = v;
                where = b * 20 + (order == 0 ? h * 5 + w : w * 4 + h);
              }
            }
          want_y.push_back(best);
          want_index.push_back(where);
        }
    check_near(y.value(), want_y);
    CHECK(indices.value() == want_index);
  }
}
