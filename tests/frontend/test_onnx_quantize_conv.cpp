// ONNX import of the integer convolutions beside ONNX's node tests (which cover explicit pads):
// QLinearConv with auto_pad and a 1-D ConvInteger against hand values (ties rounded to even); a
// 3-D one refused naming its shapes; and a dilated, padded uint8 MaxPool, whose padding must never
// win a maximum.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::compile_and_open;
using pock::testing::import_model;
using pock::testing::OnnxModel;
using Ints = std::vector<int64_t>;

namespace {

template <typename T>
void set(Engine& e, const std::string& name, const std::vector<T>& v) {
  REQUIRE(e.set_input(name, v.data(), v.size() * sizeof(T)).is_ok());
}

}  // namespace

TEST_CASE("ONNX QLinearConv with auto_pad SAME_UPPER pads after, rounding ties to even", "[onnx]") {
  // x 1..9 as [3, 3], w all 1 [2, 2], y_scale 2: SAME_UPPER pads one row and column at the end, so
  // the windows sum 12, 16, 9 / 24, 28, 15 / 15, 17, 9, halved with ties to even.
  OnnxModel m(13);
  m.input("x", {1, 1, 3, 3}, onnx::TensorProto::UINT8).input("w", {1, 1, 2, 2}, onnx::TensorProto::UINT8);
  for (const char* s : {"x_scale", "w_scale", "y_scale"}) m.input(s, {1}, onnx::TensorProto::FLOAT);
  for (const char* z : {"x_zp", "w_zp", "y_zp"}) m.input(z, {1}, onnx::TensorProto::UINT8);
  auto& n = m.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"}, {"y"}, "qconv");
  OnnxModel::attr(n, "auto_pad", std::string("SAME_UPPER"));
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto model = compile_and_open(g.value());
  Engine& e = *model.engine;
  set<uint8_t>(e, "x", {1, 2, 3, 4, 5, 6, 7, 8, 9});
  set<uint8_t>(e, "w", {1, 1, 1, 1});
  set<float>(e, "x_scale", {1});
  set<float>(e, "w_scale", {1});
  set<float>(e, "y_scale", {2});
  for (const char* z : {"x_zp", "w_zp", "y_zp"}) set<uint8_t>(e, z, {0});
  REQUIRE(e.infer().is_ok());
  auto y = e.output<uint8_t>("y");
  REQUIRE(y.is_ok());
  CHECK(y.value() == std::vector<uint8_t>{6, 8, 4, 12, 14, 8, 8, 8, 4});
}

TEST_CASE("ONNX ConvInteger over one spatial axis runs as 2-D with a unit height", "[onnx]") {
  // x - x_zp = 0, 10, 20, 30, 40 after one pad at the start, windows of 2 every 2: (pad, 0),
  // (10, 20), (30, 40) against w (1, 2) and (3, 0).
  OnnxModel m(13);
  m.input("x", {1, 1, 5}, onnx::TensorProto::UINT8).input("w", {2, 1, 2}, onnx::TensorProto::UINT8);
  m.input("x_zp", {1}, onnx::TensorProto::UINT8);
  auto& n = m.node("ConvInteger", {"x", "w", "x_zp"}, {"y"}, "conv1d");
  OnnxModel::attr(n, "pads", Ints{1, 0});
  OnnxModel::attr(n, "strides", Ints{2});
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto model = compile_and_open(g.value());
  set<uint8_t>(*model.engine, "x", {10, 20, 30, 40, 50});
  set<uint8_t>(*model.engine, "w", {1, 2, 3, 0});
  set<uint8_t>(*model.engine, "x_zp", {10});
  REQUIRE(model.engine->infer().is_ok());
  auto y = model.engine->output<int32_t>("y");
  REQUIRE(y.is_ok());
  CHECK(y.value() == std::vector<int32_t>{0, 50, 110, 0, 30, 90});
}

TEST_CASE("ONNX ConvInteger over three spatial axes is refused naming the shapes", "[onnx][errors]") {
  OnnxModel m(13);
  m.input("x", {1, 1, 2, 2, 2}, onnx::TensorProto::UINT8).input("w", {1, 1, 1, 1, 1}, onnx::TensorProto::UINT8);
  m.node("ConvInteger", {"x", "w"}, {"y"}, "conv3d");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("only 1-D and 2-D integer convolutions") && Catch::Contains("[1, 1, 2, 2, 2]"));
}

TEST_CASE("ONNX dilated MaxPool on uint8 leaves the padding out of the maximum", "[onnx]") {
  // kernel 2 x 2 with dilation 2 and one pad all round: each window reads rows and columns
  // {o - 1, o + 1}; the all-zero windows stay 0.
  OnnxModel m(12);
  m.input("x", {1, 1, 3, 3}, onnx::TensorProto::UINT8);
  auto& n = m.node("MaxPool", {"x"}, {"y"}, "pool");
  OnnxModel::attr(n, "kernel_shape", Ints{2, 2});
  OnnxModel::attr(n, "dilations", Ints{2, 2});
  OnnxModel::attr(n, "pads", Ints{1, 1, 1, 1});
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto model = compile_and_open(g.value());
  set<uint8_t>(*model.engine, "x", {0, 5, 0, 7, 0, 3, 0, 1, 0});
  REQUIRE(model.engine->infer().is_ok());
  auto y = model.engine->output<uint8_t>("y");
  REQUIRE(y.is_ok());
  CHECK(y.value() == std::vector<uint8_t>{0, 7, 0, 5, 0, 5, 0, 7, 0});
}
