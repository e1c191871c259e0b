// ONNX import of the activations PyTorch does not write as single nodes (Softsign, ThresholdedRelu)
// or writes without attributes (Selu, Elu, Celu defaults): each imported node run on numbers from
// its ONNX definition, computed here. PyTorch's exports of Elu, Selu, Celu, Softplus, Mish and
// PRelu are checked whole, inference and training, in tests/parity/run_op_parity.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::infer_one;
using pock::testing::OnnxModel;

namespace {

const std::vector<float> kX = {-3.0f, -1.25f, -0.5f, 0.0f, 0.25f, 0.75f, 1.0f, 1.5f, 4.0f};

// One node `op` on x [9] with the given float attributes, imported and run. Mish is defined
// from opset 18 on; the others are as old as opset 17 allows.
std::vector<float> run_node(const std::string& op, const std::vector<std::pair<std::string, float>>& attrs) {
  OnnxModel m(op == "Mish" ? 18 : 17);
  m.input("x", {static_cast<int64_t>(kX.size())});
  onnx::NodeProto& n = m.node(op, {"x"}, {"y"}, "act");
  for (const auto& [name, value] : attrs) OnnxModel::attr(n, name, value);
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return infer_one(g.value(), "x", kX, "y");
}

void check_node(const std::string& op, const std::vector<std::pair<std::string, float>>& attrs,
                const std::function<double(double)>& f) {
  const std::vector<float> y = run_node(op, attrs);
  REQUIRE(y.size() == kX.size());
  for (size_t i = 0; i < kX.size(); ++i) {
    INFO(op << " at x = " << kX[i]);
    CHECK(y[i] == Approx(f(kX[i])).epsilon(1e-6).margin(1e-7));
  }
}

}  // namespace

TEST_CASE("ONNX activations import with ONNX's attribute defaults", "[onnx]") {
  // operators.md: Elu and Celu alpha = 1; Selu alpha = 1.67326319..., gamma = 1.05070102...; ThresholdedRelu alpha = 1.
  check_node("Elu", {}, [](double x) { return x > 0 ? x : std::exp(x) - 1.0; });
  check_node("Celu", {}, [](double x) { return std::max(0.0, x) + std::min(0.0, std::exp(x) - 1.0); });
  check_node("Selu", {}, [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1.0)); });
  check_node("ThresholdedRelu", {}, [](double x) { return x > 1.0 ? x : 0.0; });
  check_node("Softsign", {}, [](double x) { return x / (1.0 + std::fabs(x)); });
  check_node("Softplus", {}, [](double x) { return std::log(1.0 + std::exp(x)); });
  check_node("Mish", {}, [](double x) { return x * std::tanh(std::log(1.0 + std::exp(x))); });
}

TEST_CASE("ONNX activation attributes are honoured", "[onnx]") {
  check_node("Elu", {{"alpha", 0.5f}}, [](double x) { return x > 0 ? x : 0.5 * (std::exp(x) - 1.0); });
  check_node("Celu", {{"alpha", 2.0f}}, [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * (std::exp(x / 2.0) - 1.0)); });
  check_node("Selu", {{"alpha", 2.0f}, {"gamma", 0.5f}}, [](double x) { return 0.5 * (x > 0 ? x : 2.0 * (std::exp(x) - 1.0)); });
  check_node("ThresholdedRelu", {{"alpha", 0.5f}}, [](double x) { return x > 0.5 ? x : 0.0; });
}

TEST_CASE("ONNX PRelu takes a per-channel slope initializer", "[onnx]") {
  OnnxModel m;
  m.input("x", {1, 2, 1, 2});
  m.floats("slope", {2, 1, 1}, {0.5f, -2.0f});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu");
  m.output("y");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  CHECK(infer_one(g.value(), "x", {-1.0f, 2.0f, -3.0f, 4.0f}, "y") == std::vector<float>{-0.5f, 2.0f, 6.0f, 4.0f});
}

TEST_CASE("ONNX PRelu with a slope that does not broadcast to x is refused naming the shapes", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {1, 3, 2, 2});
  m.floats("slope", {2, 1, 1}, {0.5f, 0.5f});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("slope [2, 1, 1]") && Catch::Contains("[1, 3, 2, 2]"));
}

TEST_CASE("ONNX Celu with alpha = 0 is refused", "[onnx][errors]") {
  OnnxModel m;
  m.input("x", {2});
  OnnxModel::attr(m.node("Celu", {"x"}, {"y"}, "celu"), "alpha", 0.0f);
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("alpha"));
}
