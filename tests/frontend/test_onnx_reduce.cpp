// ONNX import of the reductions pock added for ONNX's node tests (ReduceMin, ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp), ArgMax / ArgMin and
// LayerNormalization's Mean / InvStdDev outputs. Expected numbers come from ONNX's defining
// formulas written out here, never from pock's kernels.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"
#include "support/onnx_reduce_reference.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

const std::vector<float> kX{1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f};  // [2, 3]

// A model of one reduction over axis 1 of a [2, 3] input. The axes are an attribute: the onnx
// library pock links checks these ops against their opset-13 schemas, which have no axes input
// (the converter reads that input through the code ReduceSum's tests cover).
OnnxModel reduce_model(const std::string& op, int64_t keepdims) {
  OnnxModel m(17);
  m.input("x", {2, 3});
  auto& n = m.node(op, {"x"}, {"y"}, "reduce");
  OnnxModel::attr(n, "axes", std::vector<int64_t>{1});
  OnnxModel::attr(n, "keepdims", keepdims);
  m.output("y");
  return m;
}

// Row r of kX reduced by ONNX's definition of `op`.
double onnx_reduce_row(const std::string& op, int r) {
  return pock::test::onnx_reduce_group(op, {kX.begin() + r * 3, kX.begin() + r * 3 + 3});
}

}  // namespace

TEST_CASE("ONNX's other reductions import as the pock op of the same name", "[onnx]") {
  for (const char* op : {"ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    for (const int64_t keepdims : {0, 1}) {
      INFO(op << " keepdims " << keepdims);
      auto g = import_model(reduce_model(op, keepdims));
      INFO(g.status().to_string());
      REQUIRE(g.is_ok());
      const Node& n = g.value().nodes().back();
      CHECK(n.op == op);
      CHECK(g.value().tensor(n.outputs[0]).shape == (keepdims ? Shape{2, 1} : Shape{2}));
      const auto y = infer_one(g.value(), "x", kX, "y");
      REQUIRE(y.size() == 2);
      for (int r = 0; r < 2; ++r) CHECK(y[static_cast<size_t>(r)] == Approx(onnx_reduce_row(op, r)).epsilon(1e-6));
    }
  }
}

TEST_CASE("ArgMax and ArgMin import with an i64 output", "[onnx]") {
  for (const bool max : {true, false}) {
    for (const int64_t last : {0, 1}) {
      OnnxModel m(13);
      m.input("x", {2, 3});
      auto& n = m.node(max ? "ArgMax" : "ArgMin", {"x"}, {"y"}, "arg");
      OnnxModel::attr(n, "axis", int64_t{-1});
      OnnxModel::attr(n, "keepdims", int64_t{0});
      OnnxModel::attr(n, "select_last_index", last);
      m.output("y");
      auto g = import_model(m);
      REQUIRE(g.is_ok());
      const Node& node = g.value().nodes().back();
      CHECK(g.value().tensor(node.outputs[0]).dtype == DType::kI64);
      // Rows {1, 1, -2} and {4, 0.5, 4}: ties in both, so select_last_index decides.
      const std::vector<float> x{1.0f, 1.0f, -2.0f, 4.0f, 0.5f, 4.0f};
      const std::vector<int64_t> want = max ? (last ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{0, 0})
                                            : std::vector<int64_t>{2, 1};
      INFO("max " << max << " last " << last);
      CHECK(infer_one<int64_t>(g.value(), "x", x, "y") == want);
    }
  }
}

TEST_CASE("LayerNormalization's Mean and InvStdDev outputs are read in ONNX's shape", "[onnx]") {
  OnnxModel m(17);
  m.input("x", {2, 3});
  m.floats("gamma", {3}, {1.0f, 2.0f, 0.5f}).floats("beta", {3}, {0.0f, 1.0f, -1.0f});
  auto& n = m.node("LayerNormalization", {"x", "gamma", "beta"}, {"y", "mean", "inv_std"}, "ln");
  OnnxModel::attr(n, "epsilon", 1e-3f);
  m.output("y").output("mean").output("inv_std");
  auto g = import_model(m);
  REQUIRE(g.is_ok());
  auto blob = compile(g.value(), nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("x", kX).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto mean = engine->output<float>("mean");
  auto inv_std = engine->output<float>("inv_std");
  auto y = engine->output<float>("y");
  REQUIRE(mean.is_ok());
  REQUIRE(inv_std.is_ok());
  REQUIRE(y.is_ok());
  for (const Node& node : g.value().nodes()) {
    if (node.op == "Reshape") CHECK(g.value().tensor(node.outputs[0]).shape == Shape{2, 1});  // keepdims form
  }
  const std::vector<float> gamma{1.0f, 2.0f, 0.5f}, beta{0.0f, 1.0f, -1.0f};
  for (int r = 0; r < 2; ++r) {
    double mu = 0, var = 0;
    for (int k = 0; k < 3; ++k) mu += kX[static_cast<size_t>(r * 3 + k)] / 3.0;
    for (int k = 0; k < 3; ++k) var += std::pow(kX[static_cast<size_t>(r * 3 + k)] - mu, 2) / 3.0;
    const double inv = 1.0 / std::sqrt(var + 1e-3);
    CHECK(mean.value()[static_cast<size_t>(r)] == Approx(mu).epsilon(1e-6));
    CHECK(inv_std.value()[static_cast<size_t>(r)] == Approx(inv).epsilon(1e-5));
    for (int k = 0; k < 3; ++k) {
      const size_t i = static_cast<size_t>(r * 3 + k);
      CHECK(y.value()[i] == Approx((kX[i] - mu) * inv * gamma[static_cast<size_t>(k)] + beta[static_cast<size_t>(k)]).epsilon(1e-5));
    }
  }
}
