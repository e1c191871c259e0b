// ONNX import of Trilu on a run-time input, Mod (fmod 0 and 1), and Max/Min/Pow/Cast on integer
// and f16 tensors. Expected numbers are ONNX's definitions (numpy's) worked out by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;
using pock::testing::ops_of;

namespace {

// Compiles `g`, sets each input's raw bytes, runs infer and returns output "y" as T.
template <typename T>
std::vector<T> run_bytes(const Graph& g, const std::vector<std::pair<std::string, std::vector<uint8_t>>>& inputs) {
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  for (const auto& [name, bytes] : inputs) REQUIRE(engine->set_input(name, bytes.data(), bytes.size()).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto y = engine->output<T>("y");
  REQUIRE(y.is_ok());
  return y.value();
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

OnnxModel binary_model(const std::string& op, int elem_a, int elem_b, int64_t opset = 13) {
  OnnxModel m(opset);
  m.input("a", {4}, elem_a).input("b", {4}, elem_b);
  m.node(op, {"a", "b"}, {"y"}, "op");
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("Trilu of a run-time input becomes pock's Trilu with k from the constant input", "[onnx]") {
  for (const int64_t upper : {0, 1}) {
    OnnxModel m(14);
    m.input("x", {2, 3});
    m.ints("k", {}, {-1});
    auto& n = m.node("Trilu", {"x", "k"}, {"y"}, "trilu");
    OnnxModel::attr(n, "upper", upper);
    m.output("y");
    auto g = import_model(m);
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    CHECK(ops_of(g.value()) == std::vector<std::string>{"Trilu"});
    // [[1, 2, 3], [4, 5, 6]] from diagonal -1: upper keeps j >= i - 1 (all), lower j <= i - 1 (only 4).
    const auto y = pock::testing::infer_one(g.value(), "x", {1, 2, 3, 4, 5, 6}, "y");
    CHECK(y == (upper ? std::vector<float>{1, 2, 3, 4, 5, 6} : std::vector<float>{0, 0, 0, 4, 0, 0}));
  }
}

TEST_CASE("Trilu with k as a graph input passes k at run time", "[onnx]") {
  OnnxModel m(14);
  m.input("x", {2, 3}).input("k", {}, onnx::TensorProto::INT64);
  m.graph().mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape();  // a scalar: rank 0, not unknown
  m.node("Trilu", {"x", "k"}, {"y"}, "trilu");
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  // upper (the default) from diagonal 1 of [[1, 2, 3], [4, 5, 6]]: j >= i + 1 keeps 2, 3 and 6.
  CHECK(run_bytes<float>(g.value(), {{"x", bytes_of<float>({1, 2, 3, 4, 5, 6})}, {"k", bytes_of<int64_t>({1})}}) ==
        std::vector<float>{0, 2, 3, 0, 0, 6});
}

TEST_CASE("Mod imports as Mod (fmod 0) or Fmod (fmod 1), on integers and floats", "[onnx]") {
  for (const int64_t fmod : {0, 1}) {
    OnnxModel m = binary_model("Mod", onnx::TensorProto::INT64, onnx::TensorProto::INT64);
    OnnxModel::attr(*m.graph().mutable_node(0), "fmod", fmod);
    auto g = import_model(m);
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    CHECK(ops_of(g.value()) == std::vector<std::string>{fmod ? "Fmod" : "Mod"});
    const auto y = run_bytes<int64_t>(g.value(), {{"a", bytes_of<int64_t>({7, -7, 7, -7})}, {"b", bytes_of<int64_t>({3, 3, -3, -3})}});
    CHECK(y == (fmod ? std::vector<int64_t>{1, -1, 1, -1} : std::vector<int64_t>{1, 2, -2, -1}));
  }
  OnnxModel m = binary_model("Mod", onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT);
  OnnxModel::attr(*m.graph().mutable_node(0), "fmod", int64_t{1});
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  const auto y = run_bytes<float>(g.value(), {{"a", bytes_of<float>({5.5f, -5.5f, 5.5f, -5.5f})}, {"b", bytes_of<float>({2, 2, -2, -2})}});
  CHECK(y == std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f});
}

TEST_CASE("Max and Mod run on int8 and uint8", "[onnx]") {
  auto max = import_model(binary_model("Max", onnx::TensorProto::INT8, onnx::TensorProto::INT8));
  REQUIRE(max.is_ok());
  CHECK(run_bytes<int8_t>(max.value(), {{"a", bytes_of<int8_t>({1, -128, 127, 0})}, {"b", bytes_of<int8_t>({2, -6, 3, -1})}}) ==
        std::vector<int8_t>{2, -6, 127, 0});
  auto mod = import_model(binary_model("Mod", onnx::TensorProto::UINT8, onnx::TensorProto::UINT8));
  REQUIRE(mod.is_ok());
  CHECK(run_bytes<uint8_t>(mod.value(), {{"a", bytes_of<uint8_t>({7, 255, 9, 0})}, {"b", bytes_of<uint8_t>({3, 16, 9, 5})}}) ==
        std::vector<uint8_t>{1, 15, 0, 0});
}

TEST_CASE("Max, Min and Pow run on int32 and int64; Pow casts a mixed exponent to the base", "[onnx]") {
  auto max = import_model(binary_model("Max", onnx::TensorProto::INT32, onnx::TensorProto::INT32));
  REQUIRE(max.is_ok());
  CHECK(run_bytes<int32_t>(max.value(), {{"a", bytes_of<int32_t>({1, -5, 3, 0})}, {"b", bytes_of<int32_t>({2, -6, 3, -1})}}) ==
        std::vector<int32_t>{2, -5, 3, 0});
  auto min = import_model(binary_model("Min", onnx::TensorProto::INT64, onnx::TensorProto::INT64));
  REQUIRE(min.is_ok());
  CHECK(run_bytes<int64_t>(min.value(), {{"a", bytes_of<int64_t>({1, -5, 3, 0})}, {"b", bytes_of<int64_t>({2, -6, 3, -1})}}) ==
        std::vector<int64_t>{1, -6, 3, -1});
  auto pow = import_model(binary_model("Pow", onnx::TensorProto::INT64, onnx::TensorProto::INT64));
  REQUIRE(pow.is_ok());
  CHECK(run_bytes<int64_t>(pow.value(), {{"a", bytes_of<int64_t>({2, -3, 10, 7})}, {"b", bytes_of<int64_t>({5, 3, 0, 1})}}) ==
        std::vector<int64_t>{32, -27, 1, 7});
  // Pow(float, int64): ONNX lets the exponent have its own type.
  auto mixed = import_model(binary_model("Pow", onnx::TensorProto::FLOAT, onnx::TensorProto::INT64));
  INFO(mixed.status().to_string());
  REQUIRE(mixed.is_ok());
  CHECK(ops_of(mixed.value()) == std::vector<std::string>{"Cast", "Pow"});
  CHECK(run_bytes<float>(mixed.value(), {{"a", bytes_of<float>({2, 0.5f, -3, 9})}, {"b", bytes_of<int64_t>({3, 2, 2, 0})}}) ==
        std::vector<float>{8, 0.25f, 9, 1});
}

TEST_CASE("Max and Cast run on f16 tensors", "[onnx]") {
  OnnxModel m(13);
  m.input("a", {2}, onnx::TensorProto::FLOAT16).input("b", {2}, onnx::TensorProto::FLOAT16);
  m.node("Max", {"a", "b"}, {"m"}, "max");
  auto& cast = m.node("Cast", {"m"}, {"y"}, "cast");
  OnnxModel::attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  // Half bits: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 2.5 = 0x4100.
  CHECK(run_bytes<float>(g.value(), {{"a", bytes_of<uint16_t>({0x3C00, 0xC000})}, {"b", bytes_of<uint16_t>({0x3800, 0x4100})}}) ==
        std::vector<float>{1.0f, 2.5f});
}
