// What tf2onnx writes for a Keras model (tests/frontend/tf2onnx has the whole model against
// TensorFlow): NHWC<->NCHW Transposes back to back, which the importer composes and drops; Keras's
// BatchNormalization momentum; and initializers that its merge_duplication optimizer shares
// between a weight and running statistics, which must be refused by name.
#include <catch2/catch.hpp>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("NCHW->NHWC->NCHW Transposes between two ops cancel", "[onnx][tf2onnx]") {
  OnnxModel m;
  m.input("x", {1, 2, 3, 4});
  m.node("Relu", {"x"}, {"a"}, "relu1");
  OnnxModel::attr(m.node("Transpose", {"a"}, {"nhwc"}, "to_nhwc"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  OnnxModel::attr(m.node("Transpose", {"nhwc"}, {"nchw"}, "to_nchw"), "perm", std::vector<int64_t>{0, 3, 1, 2});
  m.node("Relu", {"nchw"}, {"y"}, "relu2");
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  CHECK(count_op(g.value(), "Transpose") == 0);
  CHECK(count_op(g.value(), "Relu") == 2);
  CHECK(infer_one(g.value(), "x", iota(24), "y") == iota(24));
}

TEST_CASE("a chain of Transposes becomes one with the composed permutation", "[onnx][tf2onnx]") {
  // [1, 2, 3, 4] -> perm {0, 2, 3, 1} -> [1, 3, 4, 2] -> perm {1, 0, 2, 3} -> [3, 1, 4, 2]:
  // y[a, b, c, d] = x[b, d, a, c]: y's axes are x's axes 2, 0, 3, 1, one Transpose with that perm.
  OnnxModel m;
  m.input("x", {1, 2, 3, 4});
  m.node("Relu", {"x"}, {"a"}, "relu1");
  OnnxModel::attr(m.node("Transpose", {"a"}, {"t1"}, "t1"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  OnnxModel::attr(m.node("Transpose", {"t1"}, {"y"}, "t2"), "perm", std::vector<int64_t>{1, 0, 2, 3});
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  REQUIRE(count_op(g.value(), "Transpose") == 1);
  for (const Node& n : g->nodes()) {
    if (n.op == "Transpose") CHECK(n.attrs.get_ints("perm", {}) == std::vector<int64_t>{2, 0, 3, 1});
  }
  const std::vector<float> y = infer_one(g.value(), "x", iota(24), "y");
  REQUIRE(y.size() == 24);
  // y has shape [3, 1, 4, 2]; element (a, 0, c, d) is x[0, d, a, c] = d*12 + a*4 + c.
  for (int a = 0; a < 3; ++a) {
    for (int c = 0; c < 4; ++c) {
      for (int d = 0; d < 2; ++d) CHECK(y[static_cast<size_t>(a * 8 + c * 2 + d)] == static_cast<float>(d * 12 + a * 4 + c));
    }
  }
}

TEST_CASE("an intermediate Transpose that another node reads stays", "[onnx][tf2onnx]") {
  OnnxModel m;
  m.input("x", {1, 2, 2, 3});
  m.node("Relu", {"x"}, {"a"}, "relu");
  OnnxModel::attr(m.node("Transpose", {"a"}, {"nhwc"}, "to_nhwc"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  OnnxModel::attr(m.node("Transpose", {"nhwc"}, {"back"}, "to_nchw"), "perm", std::vector<int64_t>{0, 3, 1, 2});
  m.node("Relu", {"nhwc"}, {"side"}, "side");
  m.output("back").output("side");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  CHECK(count_op(g.value(), "Transpose") == 1);
  CHECK(infer_one(g.value(), "x", iota(12), "back") == iota(12));
  const std::vector<float> side = infer_one(g.value(), "x", iota(12), "side");
  REQUIRE(side.size() == 12);
  CHECK(side[1] == 6.0f);  // nhwc[0, 0, 0, 1] = x[0, 1, 0, 0], x's element 1 * 2 * 3
}

TEST_CASE("Keras's BatchNormalization momentum 0.99 maps to pock's 0.01", "[onnx][tf2onnx]") {
  OnnxModel m;
  m.input("x", {1, 2, 1, 1});
  m.floats("gamma", {2}, {1.5f, 0.5f}).floats("beta", {2}, {0.1f, 0.2f});
  m.floats("mean", {2}, {0.3f, 0.4f}).floats("var", {2}, {1.1f, 0.9f});
  auto& bn = m.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"}, "model/bn/FusedBatchNormV3");
  OnnxModel::attr(bn, "epsilon", 1e-3f);
  OnnxModel::attr(bn, "momentum", 0.99f);
  m.output("y");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  REQUIRE(count_op(g.value(), "BatchNorm") == 1);
  for (const Node& n : g->nodes()) {
    if (n.op != "BatchNorm") continue;
    CHECK(n.attrs.get_float("momentum", 0) == 0.01);
    CHECK(n.attrs.get_float("eps", 0) == 1e-3);
  }
}

TEST_CASE("an initializer shared by a weight and running statistics is refused", "[onnx][tf2onnx][errors]") {
  // tf2onnx's merge_duplication gives all-ones gamma and running variance one initializer.
  OnnxModel m;
  m.input("x", {1, 2, 1, 1});
  m.floats("ones", {2}, {1, 1}).floats("zeros", {2}, {0, 0});
  m.node("BatchNormalization", {"x", "ones", "zeros", "zeros", "ones"}, {"y"}, "model/bn/FusedBatchNormV3");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  const std::string msg = g.status().message();
  INFO(msg);
  CHECK(msg.find("model/bn/FusedBatchNormV3") != std::string::npos);
  CHECK(msg.find("'zeros'") != std::string::npos);   // beta (a weight) and running mean
  CHECK(msg.find("input 3") != std::string::npos);
  CHECK(msg.find("and as a weight") != std::string::npos);
  CHECK(msg.find("merge_duplication") != std::string::npos);
}

TEST_CASE("two BatchNorms sharing running statistics are refused", "[onnx][tf2onnx][errors]") {
  OnnxModel m;
  m.input("x", {1, 2, 1, 1});
  m.floats("g1", {2}, {1, 2}).floats("b1", {2}, {3, 4}).floats("g2", {2}, {5, 6}).floats("b2", {2}, {7, 8});
  m.floats("mean", {2}, {0, 0.5f}).floats("var", {2}, {1, 1.5f});
  m.node("BatchNormalization", {"x", "g1", "b1", "mean", "var"}, {"h"}, "bn1");
  m.node("BatchNormalization", {"h", "g2", "b2", "mean", "var"}, {"y"}, "bn2");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  const std::string msg = g.status().message();
  INFO(msg);
  CHECK(msg.find("bn2") != std::string::npos);
  CHECK(msg.find("'mean'") != std::string::npos);
  CHECK(msg.find("statistics twice") != std::string::npos);
}
