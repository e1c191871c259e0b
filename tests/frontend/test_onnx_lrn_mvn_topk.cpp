// ONNX import of LRN and MeanVarianceNormalization (composed of ops pock trains) and of TopK and
// OneHot with constant K and depth: each imported model run on numbers computed here, in double,
// from the ONNX definitions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

std::vector<float> wavy(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(0.9 * static_cast<double>(i)) * (1.0 + i % 3));
  return x;
}

}  // namespace

TEST_CASE("ONNX LRN gives the ONNX definition's values", "[onnx]") {
  const int64_t n = 2, c = 5, hw = 3;
  const double alpha = 0.02, beta = 0.75, bias = 1.5;
  for (int64_t size : {2, 3}) {
    DYNAMIC_SECTION("size " << size) {
      OnnxModel m;
      m.input("x", {n, c, hw, 1});
      onnx::NodeProto& lrn = m.node("LRN", {"x"}, {"y"}, "lrn");
      OnnxModel::attr(lrn, "size", size);
      OnnxModel::attr(lrn, "alpha", static_cast<float>(alpha));
      OnnxModel::attr(lrn, "beta", static_cast<float>(beta));
      OnnxModel::attr(lrn, "bias", static_cast<float>(bias));
      m.output("y");
      auto g = import_model(m);
      INFO(g.status().to_string());
      REQUIRE(g.is_ok());
      const std::vector<float> x = wavy(static_cast<size_t>(n * c * hw));
      const std::vector<float> y = infer_one(g.value(), "x", x, "y");
      REQUIRE(y.size() == x.size());
      auto at = [&](int64_t b, int64_t ch, int64_t k) { return static_cast<double>(x[static_cast<size_t>((b * c + ch) * hw + k)]); };
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          for (int64_t k = 0; k < hw; ++k) {
            double square_sum = 0;  // channels [ch - floor((size-1)/2), ch + ceil((size-1)/2)] that exist
            for (int64_t j = std::max<int64_t>(0, ch - (size - 1) / 2); j <= std::min(c - 1, ch + size / 2); ++j) {
              square_sum += at(b, j, k) * at(b, j, k);
            }
            const double want = at(b, ch, k) / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
            CHECK(y[static_cast<size_t>((b * c + ch) * hw + k)] == Approx(want).margin(1e-5));
          }
        }
      }
    }
  }
}

TEST_CASE("ONNX MeanVarianceNormalization normalizes over its axes", "[onnx]") {
  OnnxModel m;
  m.input("x", {2, 3, 2, 2});
  m.node("MeanVarianceNormalization", {"x"}, {"y"}, "mvn");  // axes [0, 2, 3]: per channel
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  const std::vector<float> x = wavy(24);
  const std::vector<float> y = infer_one(g.value(), "x", x, "y");
  REQUIRE(y.size() == x.size());
  for (size_t ch = 0; ch < 3; ++ch) {
    std::vector<size_t> members;
    for (size_t b = 0; b < 2; ++b) {
      for (size_t k = 0; k < 4; ++k) members.push_back((b * 3 + ch) * 4 + k);
    }
    double mean = 0, var = 0;
    for (size_t i : members) mean += x[i] / 8.0;
    for (size_t i : members) var += (x[i] - mean) * (x[i] - mean) / 8.0;
    for (size_t i : members) CHECK(y[i] == Approx((x[i] - mean) / (std::sqrt(var) + 1e-9)).margin(1e-5));
  }
}

TEST_CASE("ONNX TopK with a constant K and OneHot with a constant depth", "[onnx]") {
  OnnxModel top;
  top.input("x", {2, 3});
  top.ints("k", {1}, {2});
  OnnxModel::attr(top.node("TopK", {"x", "k"}, {"values", "indices"}, "top"), "largest", int64_t{0});
  top.output("values");
  auto g = import_model(top);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  CHECK(infer_one(g.value(), "x", {3, -1, 2, 0, 5, 4}, "values") == std::vector<float>{-1, 2, 0, 4});

  OnnxModel hot;
  hot.input("indices", {3});
  hot.scalar("depth", 4.0f);
  hot.floats("values", {2}, {-1, 2});
  hot.node("OneHot", {"indices", "depth", "values"}, {"y"}, "hot");
  hot.output("y");
  auto h = import_model(hot);
  INFO(h.status().to_string());
  REQUIRE(h.is_ok());
  CHECK(infer_one(h.value(), "indices", {1, -1, 7}, "y") == std::vector<float>{-1, 2, -1, -1, -1, -1, -1, 2, -1, -1, -1, -1});
}

TEST_CASE("ONNX TopK with K fed at run time is refused naming K", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2, 3});
  m.input("k", {1}, onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k"}, {"values", "indices"}, "top");
  m.output("values");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("K"));
}
