// ONNX import of ConvTranspose: small cases computed by hand from ONNX's definition (a strided
// 1x1 transposed convolution spreads the input apart and the bias fills every pixel; a 1-D one
// with the pads that auto_pad and output_shape give), and the refusals of what the converter does
// not take. PyTorch's export is checked whole, inference and training, in
// tests/parity/run_op_parity.py.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

OnnxModel strided_1x1(const std::vector<int64_t>& output_shape = {}) {
  OnnxModel m;
  m.input("x", {1, 1, 2, 2});
  m.floats("w", {1, 1, 1, 1}, {2.0f}).floats("b", {1}, {0.5f});
  onnx::NodeProto& n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "up");
  OnnxModel::attr(n, "strides", std::vector<int64_t>{2, 2});
  if (!output_shape.empty()) OnnxModel::attr(n, "output_shape", output_shape);
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("ONNX ConvTranspose with stride 2 spreads the input apart and adds the bias everywhere", "[onnx]") {
  auto g = import_model(strided_1x1());
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  // y = 2 x at (2i, 2j), 0 elsewhere on the 3 x 3 output, plus 0.5.
  CHECK(infer_one(g.value(), "x", {1, 2, 3, 4}, "y") == std::vector<float>{2.5f, 0.5f, 4.5f, 0.5f, 0.5f, 0.5f, 6.5f, 0.5f, 8.5f});
  auto same_shape = import_model(strided_1x1({3, 3}));  // output_shape equal to what the pads give
  CHECK(same_shape.is_ok());
}

TEST_CASE("ONNX ConvTranspose output_shape past the full output pads it with zeros at the end", "[onnx]") {
  // total padding = 2 (2 - 1) + 1 - 4 = -1: no start pad, and one more row and column at the end,
  // where no input position reaches (only the bias).
  auto g = import_model(strided_1x1({4, 4}));
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  CHECK(infer_one(g.value(), "x", {1, 2, 3, 4}, "y") ==
        std::vector<float>{2.5f, 0.5f, 4.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 6.5f, 0.5f, 8.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  // [5, 5] needs a start pad of -1 (output before the first input position): refused, named.
  auto shifted = import_model(strided_1x1({5, 5}));
  REQUIRE_FALSE(shifted.is_ok());
  CHECK(shifted.status().code() == Code::kUnsupportedOp);
  CHECK_THAT(shifted.status().message(), Catch::Contains("output_shape [5, 5]") && Catch::Contains("negative start pad"));
}

namespace {

// 1-D: x = [1, 2], w = [1, 1, 1], stride 2. The full output (no pads) is [1, 1, 1 + 2, 2, 2].
OnnxModel ones_1d(const std::string& auto_pad, const std::vector<int64_t>& output_shape = {}) {
  OnnxModel m;
  m.input("x", {1, 1, 2});
  m.floats("w", {1, 1, 3}, {1, 1, 1});
  onnx::NodeProto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "up1d");
  OnnxModel::attr(n, "strides", std::vector<int64_t>{2});
  if (!auto_pad.empty()) OnnxModel::attr(n, "auto_pad", auto_pad);
  if (!output_shape.empty()) OnnxModel::attr(n, "output_shape", output_shape);
  m.output("y");
  return m;
}

std::vector<float> infer_1d(const OnnxModel& m) {
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", {1, 2}, "y");
}

}  // namespace

TEST_CASE("ONNX ConvTranspose 1-D, auto_pad SAME_UPPER / SAME_LOWER and output_shape take ONNX's pads", "[onnx]") {
  CHECK(infer_1d(ones_1d("")) == std::vector<float>{1, 1, 3, 2, 2});
  // SAME_*: the output is input x stride = 4 long, total padding 1: at the end for SAME_UPPER,
  // at the start for SAME_LOWER.
  CHECK(infer_1d(ones_1d("SAME_UPPER")) == std::vector<float>{1, 1, 3, 2});
  CHECK(infer_1d(ones_1d("SAME_LOWER")) == std::vector<float>{1, 3, 2, 2});
  CHECK(infer_1d(ones_1d("", {6})) == std::vector<float>{1, 1, 3, 2, 2, 0});
  CHECK(infer_1d(ones_1d("", {3})) == std::vector<float>{1, 3, 2});  // total 2: one each side
}
