// ONNX import of ops whose output placement is fixed at compile time: MaxUnpool (a scatter into
// zeros), Compress with a constant condition (a Gather), NonZero of a constant (folded), RoiAlign
// and ReverseSequence; against ONNX's examples and values worked out by hand. Ops whose output size
// depends on run-time data are refused saying so.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

std::vector<float> run(const OnnxModel& m, const std::vector<float>& x) {
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", x, "y");
}

}  // namespace

TEST_CASE("ONNX MaxUnpool writes X at MaxPool's indices (ONNX's examples)", "[onnx]") {
  for (bool with_shape : {false, true}) {
    DYNAMIC_SECTION("output_shape " << with_shape) {
      OnnxModel m;
      m.input("x", {1, 1, 2, 2});
      m.ints("i", {1, 1, 2, 2}, {5, 7, 13, 15});
      std::vector<std::string> inputs{"x", "i"};
      if (with_shape) {
        m.ints("shape", {4}, {1, 1, 5, 5});
        inputs.push_back("shape");
      }
      onnx::NodeProto& n = m.node("MaxUnpool", inputs, {"y"}, "unpool");
      OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
      OnnxModel::attr(n, "strides", std::vector<int64_t>{2, 2});
      m.output("y");
      const std::vector<float> y = run(m, {5, 6, 7, 8});
      // The indices address the 4 x 4 unpooled map; output_shape 5 x 5 appends a zero row and column.
      std::vector<float> want(with_shape ? 25 : 16, 0.0f);
      const int64_t w = with_shape ? 5 : 4;
      want[static_cast<size_t>(1 * w + 1)] = 5, want[static_cast<size_t>(1 * w + 3)] = 6;
      want[static_cast<size_t>(3 * w + 1)] = 7, want[static_cast<size_t>(3 * w + 3)] = 8;
      CHECK(y == want);
    }
  }
}

TEST_CASE("ONNX Compress with a constant condition (ONNX's examples)", "[onnx]") {
  OnnxModel axis0;
  axis0.input("x", {3, 2});
  axis0.ints("c", {3}, {0, 1, 1});
  OnnxModel::attr(axis0.node("Compress", {"x", "c"}, {"y"}, "compress"), "axis", int64_t{0});
  axis0.output("y");
  CHECK(run(axis0, {1, 2, 3, 4, 5, 6}) == std::vector<float>{3, 4, 5, 6});

  OnnxModel flat;
  flat.input("x", {3, 2});
  flat.ints("c", {5}, {0, 1, 0, 0, 1});
  flat.node("Compress", {"x", "c"}, {"y"}, "compress");
  flat.output("y");
  CHECK(run(flat, {1, 2, 3, 4, 5, 6}) == std::vector<float>{2, 5});
}

TEST_CASE("ONNX NonZero of a constant folds", "[onnx]") {
  OnnxModel m;
  m.input("x", {2, 3});
  m.ints("c", {2, 2}, {1, 0, 1, 1});
  m.node("NonZero", {"c"}, {"nz"}, "nonzero");
  onnx::NodeProto& cast = m.node("Cast", {"nz"}, {"f"}, "cast");
  OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Add", {"x", "f"}, {"y"}, "add");
  m.output("y");
  CHECK(run(m, std::vector<float>(6, 0.5f)) == std::vector<float>{0.5f, 1.5f, 1.5f, 0.5f, 0.5f, 1.5f});
}

TEST_CASE("ONNX ops with data-dependent output sizes are refused saying why", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2, 2});
  m.input("c", {2}, onnx::TensorProto::BOOL);
  m.node("Compress", {"x", "c"}, {"y"}, "compress");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("depends on the data"));

  OnnxModel nz;
  nz.input("x", {2, 2});
  nz.node("NonZero", {"x"}, {"y"}, "nonzero");
  nz.output("y");
  auto h = import_model(nz);
  REQUIRE_FALSE(h.is_ok());
  CHECK_THAT(h.status().message(), Catch::Contains("NonZero"));
}

TEST_CASE("ONNX RoiAlign averages bilinear samples of each bin", "[onnx]") {
  // x = 4 y + x on a 4 x 4 map: bilinear samples of a linear map are exact, so each bin's average
  // is the map at the average sample position.
  std::vector<float> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i);
  struct Case {
    const char* coordinates;
    std::vector<float> roi;
    int64_t out, ratio;
    std::vector<float> y;
  };
  const std::vector<Case> cases = {
      // Bins 1.5 wide from 0: samples at 0.375 and 1.125 (bin 0), 1.875 and 2.625 (bin 1).
      {"output_half_pixel", {0, 0, 3, 3}, 2, 2, {4 * 0.75f + 0.75f, 4 * 0.75f + 2.25f, 4 * 2.25f + 0.75f, 4 * 2.25f + 2.25f}},
      {"half_pixel", {0, 0, 3, 3}, 1, 1, {5}},           // one sample at (-0.5 + 1.5) = 1 on both axes
      {"output_half_pixel", {2, 2, 5, 5}, 1, 1, {15}},  // the sample at 3.5 clamps to the last pixel
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.coordinates << " roi " << c.roi[0]) {
      OnnxModel m;
      m.input("x", {1, 1, 4, 4});
      m.floats("rois", {1, 4}, c.roi);
      m.ints("batch", {1}, {0});
      onnx::NodeProto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
      OnnxModel::attr(n, "coordinate_transformation_mode", std::string(c.coordinates));
      OnnxModel::attr(n, "output_height", c.out);
      OnnxModel::attr(n, "output_width", c.out);
      OnnxModel::attr(n, "sampling_ratio", c.ratio);
      m.output("y");
      const std::vector<float> y = run(m, ramp);
      REQUIRE(y.size() == c.y.size());
      for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(c.y[i]).margin(1e-5));
    }
  }
}
