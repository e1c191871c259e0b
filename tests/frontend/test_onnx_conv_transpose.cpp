// ONNX import of ConvTranspose: a small case computed by hand (a strided 1x1 transposed
// convolution spreads the input apart and the bias fills every pixel), and the refusals of what
// the converter does not take. PyTorch's export is checked whole, inference and training, in
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

TEST_CASE("ONNX ConvTranspose refuses an output_shape the pads do not give, naming both", "[onnx][errors]") {
  auto g = import_model(strided_1x1({4, 4}));
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().code() == Code::kUnsupportedOp);
  CHECK_THAT(g.status().message(), Catch::Contains("output_shape [4, 4]") && Catch::Contains("[3, 3]"));
}
