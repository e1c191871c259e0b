// ONNX import of InstanceNormalization, Pad in reflect and edge modes and Tile of a run-time
// tensor: each imported model run on numbers computed here from the ONNX definitions (numpy.pad
// and numpy.tile for the layouts). PyTorch's exports of all three are checked whole, inference
// and training, in tests/parity/run_op_parity.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

TEST_CASE("ONNX InstanceNormalization normalizes each (n, c) plane, then scales and shifts per channel", "[onnx]") {
  const int64_t n = 2, c = 3, hw = 4;
  OnnxModel m;
  m.input("x", {n, c, 2, 2});
  const std::vector<float> scale = {0.5f, -1.0f, 2.0f}, bias = {0.1f, 0.2f, -0.3f};
  m.floats("scale", {c}, scale).floats("bias", {c}, bias);
  OnnxModel::attr(m.node("InstanceNormalization", {"x", "scale", "bias"}, {"y"}, "norm"), "epsilon", 1e-3f);
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  std::vector<float> x(static_cast<size_t>(n * c * hw));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)) * (1.0 + i % 5));
  const std::vector<float> y = infer_one(g.value(), "x", x, "y");
  REQUIRE(y.size() == x.size());
  for (int64_t plane = 0; plane < n * c; ++plane) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < hw; ++k) mean += x[static_cast<size_t>(plane * hw + k)] / static_cast<double>(hw);
    for (int64_t k = 0; k < hw; ++k) var += std::pow(x[static_cast<size_t>(plane * hw + k)] - mean, 2) / static_cast<double>(hw);
    const size_t ch = static_cast<size_t>(plane % c);
    for (int64_t k = 0; k < hw; ++k) {
      const size_t i = static_cast<size_t>(plane * hw + k);
      INFO("plane " << plane << " element " << k);
      CHECK(y[i] == Approx(scale[ch] * (x[i] - mean) / std::sqrt(var + 1e-3) + bias[ch]).margin(1e-5));
    }
  }
}

TEST_CASE("ONNX InstanceNormalization with a scale of the wrong size is refused naming it", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {1, 3, 2, 2});
  m.floats("scale", {2}, {1, 1}).floats("bias", {3}, {0, 0, 0});
  m.node("InstanceNormalization", {"x", "scale", "bias"}, {"y"}, "norm");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("scale") && Catch::Contains("[2]"));
}

namespace {

std::vector<float> pad_model(const std::string& mode) {
  OnnxModel m;
  m.input("x", {2, 3});
  m.ints("pads", {4}, {1, 2, 1, 1});
  onnx::NodeProto& pad = m.node("Pad", {"x", "pads"}, {"y"}, "pad");
  auto* a = pad.add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(mode);
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", {1, 2, 3, 4, 5, 6}, "y");
}

}  // namespace

TEST_CASE("ONNX Pad in reflect and edge modes gives numpy.pad's values", "[onnx]") {
  CHECK(pad_model("reflect") == std::vector<float>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2});
  CHECK(pad_model("edge") == std::vector<float>{1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6});
}

namespace {

Result<Graph> tile_model(const std::vector<int64_t>& x, const std::vector<int64_t>& repeats) {
  OnnxModel m;
  m.input("x", x);
  m.ints("repeats", {static_cast<int64_t>(repeats.size())}, repeats);
  m.node("Tile", {"x", "repeats"}, {"y"}, "tile");
  m.output("y");
  return import_model(m);
}

}  // namespace

TEST_CASE("ONNX Tile of a run-time input gives numpy.tile's values", "[onnx]") {
  auto g = tile_model({2, 3}, {2, 2});
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  // numpy.tile([[1, 2, 3], [4, 5, 6]], (2, 2))
  CHECK(infer_one(g.value(), "x", {1, 2, 3, 4, 5, 6}, "y") ==
        std::vector<float>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
}

TEST_CASE("ONNX Tile of a size-1 axis and with repeats of 1", "[onnx]") {
  auto g = tile_model({1, 2}, {3, 1});
  REQUIRE(g.is_ok());
  CHECK(infer_one(g.value(), "x", {7, 8}, "y") == std::vector<float>{7, 8, 7, 8, 7, 8});
}

TEST_CASE("ONNX Tile with repeats that are not one per axis is refused", "[onnx][errors]") {
  auto g = tile_model({2, 3}, {1, 2, 2});
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("repeats"));
}
