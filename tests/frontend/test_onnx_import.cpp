// ONNX import: the mapping onto pock ops, folding of exporter shape chains, the fusions, and the
// errors for unsupported, dynamic and malformed models. Numbers come from hand computation or
// the defining formula; whole-model numerics are checked against PyTorch in tests/parity.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;
using pock::testing::ops_of;

namespace {

const Node* find_op(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes()) {
    if (n.op == op) return &n;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("initializers keep their names and BatchNorm statistics become state", "[onnx]") {
  OnnxModel m;
  m.input("x", {1, 2, 3, 3});
  m.floats("conv.weight", {2, 2, 1, 1}, {1, 0, 0, 1}).floats("conv.bias", {2}, {0.5f, -0.5f});
  m.floats("bn.weight", {2}, {1, 1}).floats("bn.bias", {2}, {0, 0});
  m.floats("bn.running_mean", {2}, {0, 0}).floats("bn.running_var", {2}, {1, 1});
  m.node("Conv", {"x", "conv.weight", "conv.bias"}, {"c"}, "/conv/Conv");
  auto& bn = m.node("BatchNormalization", {"c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"},
                    {"b", "rm", "rv"}, "/bn/BatchNormalization");
  OnnxModel::attr(bn, "epsilon", 1e-5f);
  OnnxModel::attr(bn, "momentum", 0.9f);
  OnnxModel::attr(bn, "training_mode", int64_t{1});
  m.node("Relu", {"b"}, {"y"}, "/relu/Relu");
  m.output("y");

  auto g = import_model(m);
  REQUIRE(g.is_ok());
  CHECK(ops_of(g.value()) == std::vector<std::string>{"Conv2d", "BatchNorm", "Relu"});
  const TensorId w = g->find("conv.weight");
  REQUIRE(w != kNoTensor);
  CHECK(g->tensor(w).kind == TensorKind::kParameter);
  CHECK(g->tensor(g->find("bn.running_var")).kind == TensorKind::kState);
  const Node* n = find_op(g.value(), "BatchNorm");
  // ONNX momentum 0.9 weighs the old value; pock's (PyTorch's) 0.1 weighs the new one. The
  // float32 attributes come back as the decimals the exporter wrote.
  CHECK(n->attrs.get_float("momentum", 0) == 0.1);
  CHECK(n->attrs.get_float("eps", 0) == 1e-5);
  CHECK(g->tensor(g->outputs()[0]).name == "y");
}

TEST_CASE("exporter shape chains fold into a static Reshape", "[onnx]") {
  OnnxModel m;
  m.input("x", {2, 3, 4});
  m.ints("zero", {}, {0}).ints("axes0", {1}, {0}).ints("minus_one", {1}, {-1});
  m.node("Shape", {"x"}, {"shape"});
  auto& gather = m.node("Gather", {"shape", "zero"}, {"batch"});
  OnnxModel::attr(gather, "axis", int64_t{0});
  m.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  auto& concat = m.node("Concat", {"batch1", "minus_one"}, {"target"});
  OnnxModel::attr(concat, "axis", int64_t{0});
  m.node("Reshape", {"x", "target"}, {"y"}, "/flatten/Reshape");
  m.output("y");

  auto g = import_model(m);
  REQUIRE(g.is_ok());
  REQUIRE(ops_of(g.value()) == std::vector<std::string>{"Reshape"});
  CHECK(g->nodes()[0].attrs.get_ints("shape", {}) == std::vector<int64_t>{2, 12});
  CHECK(g->tensor(g->outputs()[0]).shape == Shape{2, 12});

  // A recipe's batch size replaces the exported one before folding, so the chain follows it.
  OnnxImportOptions rebatch;
  rebatch.batch_size = 5;
  auto g5 = import_model(m, rebatch);
  REQUIRE(g5.is_ok());
  CHECK(g5->nodes()[0].attrs.get_ints("shape", {}) == std::vector<int64_t>{5, 12});
}

TEST_CASE("MatMul of a transposed weight becomes Linear on the named weight", "[onnx]") {
  OnnxModel m;
  m.input("x", {2, 3});
  m.floats("fc.weight", {4, 3}, std::vector<float>(12, 0.25f));
  m.node("Transpose", {"fc.weight"}, {"wt"});
  m.node("MatMul", {"x", "wt"}, {"y"}, "/fc/MatMul");
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  REQUIRE(ops_of(g.value()) == std::vector<std::string>{"Linear"});
  CHECK(g->tensor(g->nodes()[0].inputs[1]).name == "fc.weight");
  CHECK(g->tensor(g->nodes()[0].inputs[1]).kind == TensorKind::kParameter);
}

TEST_CASE("Gemm with scaling and a broadcast bias computes alpha*A*B + beta*C", "[onnx]") {
  OnnxModel m;
  m.input("a", {1, 2});
  m.floats("b", {2, 2}, {3, 4, 5, 6}).floats("c", {2}, {1, -1});
  auto& gemm = m.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
  OnnxModel::attr(gemm, "alpha", 2.0f);
  OnnxModel::attr(gemm, "beta", 0.5f);
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  // [1, 2] x [[3, 4], [5, 6]] = [13, 16]; * 2 = [26, 32]; + 0.5 * [1, -1] = [26.5, 31.5].
  CHECK(infer_one(g.value(), "a", {1, 2}, "y") == std::vector<float>{26.5f, 31.5f});
}

TEST_CASE("GELU written with Erf is fused into one Gelu", "[onnx]") {
  OnnxModel m;
  m.input("x", {1, 4});
  m.scalar("sqrt2", 1.41421356f);
  m.node("Div", {"x", "sqrt2"}, {"u"});
  m.node("Erf", {"u"}, {"e"}, "/act/Erf");
  m.scalar("one", 1.0f);
  m.node("Add", {"e", "one"}, {"a"});
  m.node("Mul", {"x", "a"}, {"p"});
  m.scalar("half", 0.5f);  // written after its reader's predecessor, as PyTorch does
  m.node("Mul", {"p", "half"}, {"y"});
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  REQUIRE(ops_of(g.value()) == std::vector<std::string>{"Gelu"});
  const std::vector<float> x{-2.0f, -0.5f, 0.25f, 3.0f};
  const auto y = infer_one(g.value(), "x", x, "y");
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
    CHECK(y[i] == Approx(want).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("an op without a mapping is refused with its name and node", "[onnx][errors]") {
  OnnxModel m;
  m.input("boxes", {1, 2, 4}).input("scores", {1, 1, 2});
  m.node("NonMaxSuppression", {"boxes", "scores"}, {"y"}, "/detect/nms");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().code() == Code::kUnsupportedOp);
  CHECK(g.status().message().find("NonMaxSuppression") != std::string::npos);
  CHECK(g.status().message().find("/detect/nms") != std::string::npos);
}

TEST_CASE("a node that breaks ONNX's own schema is refused before any converter reads it", "[onnx][errors]") {
  OnnxModel reshape;  // Reshape takes (data, shape): one input alone once read past the inputs
  reshape.input("x", {2, 3});
  reshape.node("Reshape", {"x"}, {"y"}, "/head/reshape");
  reshape.output("y");
  auto g = import_model(reshape);
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK_THAT(g.status().message(), Catch::Contains("/head/reshape") && Catch::Contains("does not match ONNX's schema"));
  OnnxModel relu;  // an attribute of the wrong type
  relu.input("x", {2});
  OnnxModel::attr(relu.node("LeakyRelu", {"x"}, {"y"}, "act"), "alpha", int64_t{1});
  relu.output("y");
  auto bad_attr = import_model(relu);
  REQUIRE_FALSE(bad_attr.is_ok());
  CHECK_THAT(bad_attr.status().message(), Catch::Contains("does not match ONNX's schema"));
}

TEST_CASE("symbolic input dimensions need a size", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {-1, 3}, onnx::TensorProto::FLOAT, {"batch"});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");

  auto missing = import_model(m);
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("--input-shape") != std::string::npos);
  CHECK(missing.status().message().find("batch") != std::string::npos);

  OnnxImportOptions by_name;
  REQUIRE(parse_input_shape_arg("@batch=5", &by_name).is_ok());
  auto named = import_model(m, by_name);
  REQUIRE(named.is_ok());
  CHECK(named->tensor(named->find("x")).shape == Shape{5, 3});

  OnnxImportOptions full;
  REQUIRE(parse_input_shape_arg("x=7,3", &full).is_ok());
  auto shaped = import_model(m, full);
  REQUIRE(shaped.is_ok());
  CHECK(shaped->tensor(shaped->find("x")).shape == Shape{7, 3});

  OnnxImportOptions wrong;
  REQUIRE(parse_input_shape_arg("x=7,4", &wrong).is_ok());
  CHECK(import_model(m, wrong).status().code() == Code::kShapeMismatch);
}

TEST_CASE("input shape arguments (NAME=d0,d1 and @DIM=N) are validated", "[onnx][errors]") {
  OnnxImportOptions o;
  CHECK(parse_input_shape_arg("pixel_values=1,3,224,224", &o).is_ok());
  CHECK(o.input_shapes["pixel_values"] == Shape{1, 3, 224, 224});
  CHECK_FALSE(parse_input_shape_arg("x=", &o).is_ok());
  CHECK_FALSE(parse_input_shape_arg("x=1,a", &o).is_ok());
  CHECK_FALSE(parse_input_shape_arg("x=1,-3", &o).is_ok());
  CHECK_FALSE(parse_input_shape_arg("=4", &o).is_ok());
  CHECK_FALSE(parse_input_shape_arg("@seq=4,5", &o).is_ok());
}

TEST_CASE("a shape computed at run time is refused naming the input", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2, 6}).input("target", {2}, onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "target"}, {"y"}, "/view/Reshape");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  const std::string msg = g.status().message();
  CHECK(msg.find("/view/Reshape") != std::string::npos);
  CHECK(msg.find("input 1") != std::string::npos);
  CHECK(msg.find("'target'") != std::string::npos);
}

TEST_CASE("malformed models are errors, never crashes", "[onnx][errors]") {
  SECTION("not a protobuf") {
    const std::string junk = "this is not an onnx file at all";
    auto g = import_onnx_bytes(junk.data(), junk.size());
    CHECK(g.status().code() == Code::kInvalidArgument);
  }
  SECTION("an unsupported opset") {
    OnnxModel m(24);
    m.input("x", {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    auto g = import_model(m);
    REQUIRE_FALSE(g.is_ok());
    CHECK(g.status().message().find("opset 24") != std::string::npos);
  }
  SECTION("an initializer whose bytes do not match its dims") {
    OnnxModel m;
    m.input("x", {2});
    m.floats("w", {3}, {1, 2});  // 2 values for 3 elements
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    auto g = import_model(m);
    REQUIRE_FALSE(g.is_ok());
    CHECK(g.status().message().find("'w'") != std::string::npos);
  }
  SECTION("a node reading a value nobody produces") {
    OnnxModel m;
    m.input("x", {2});
    m.node("Add", {"x", "ghost"}, {"y"}, "add");
    m.output("y");
    auto g = import_model(m);
    REQUIRE_FALSE(g.is_ok());
    CHECK(g.status().message().find("ghost") != std::string::npos);
  }
  SECTION("every truncation and random corruption of a valid model") {
    OnnxModel m;
    m.input("x", {1, 2, 4, 4});
    m.floats("w", {3, 2, 3, 3}, std::vector<float>(54, 0.1f)).floats("b", {3}, {1, 2, 3});
    auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
    OnnxModel::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    m.node("Relu", {"c"}, {"y"}, "relu");
    m.output("y");
    const std::string good = m.bytes();
    REQUIRE(import_onnx_bytes(good.data(), good.size()).is_ok());
    for (size_t n = 0; n < good.size(); ++n) (void)import_onnx_bytes(good.data(), n);
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 2000; ++trial) {
      std::string bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<char>(rng() & 0xff);
      // Any Status is fine; a crash is not, and neither is reaching the importer's exception
      // fence (that would mean a read the importer forgot to check).
      auto r = import_onnx_bytes(bad.data(), bad.size());
      if (!r.is_ok()) CHECK(r.status().message().find("malformed ONNX model:") == std::string::npos);
    }
    SUCCEED("no crash");
  }
}
