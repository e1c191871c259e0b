// ONNX BatchNormalization with training_mode = 1 whose running statistics the model reads: y is
// normalized with the batch's mean and biased variance, and outputs 1 and 2 blend the running
// statistics with them by momentum. Expected values are computed here from ONNX's definition.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;

TEST_CASE("ONNX BatchNormalization training_mode 1 returns batch-normalized y and updated running statistics",
          "[onnx]") {
  // x [N=2, C=2, L=2]; channel c holds x[n, c, l].
  const std::vector<float> x{1, 2, 10, 20, 3, 6, 30, 60};
  const std::vector<float> gamma{2, 0.5f}, beta{1, -1}, mean{0.5f, 4}, var{1, 9};
  const float eps = 1e-3f, momentum = 0.8f;
  OnnxModel m(15);
  m.input("x", {2, 2, 2}).input("mean", {2}).input("var", {2});
  m.floats("gamma", {2}, gamma).floats("beta", {2}, beta);
  onnx::NodeProto& n = m.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y", "running_mean", "running_var"}, "bn");
  OnnxModel::attr(n, "training_mode", int64_t{1});
  OnnxModel::attr(n, "epsilon", eps);
  OnnxModel::attr(n, "momentum", momentum);
  m.output("y").output("running_mean").output("running_var");
  auto g = import_model(m);
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  auto compiled = pock::testing::compile_and_open(*g);
  Engine* engine = &*compiled.engine;
  REQUIRE(engine->set_input("x", x).is_ok());
  REQUIRE(engine->set_input("mean", mean).is_ok());
  REQUIRE(engine->set_input("var", var).is_ok());
  REQUIRE(engine->infer().is_ok());
  auto y = engine->output<float>("y");
  auto rm = engine->output<float>("running_mean");
  auto rv = engine->output<float>("running_var");
  REQUIRE((y.is_ok() && rm.is_ok() && rv.is_ok()));
  for (int c = 0; c < 2; ++c) {
    const float v[4] = {x[2 * c], x[2 * c + 1], x[4 + 2 * c], x[4 + 2 * c + 1]};
    const double mu = (v[0] + v[1] + v[2] + v[3]) / 4.0;
    double sigma2 = 0;
    for (float e : v) sigma2 += (e - mu) * (e - mu) / 4.0;  // biased, as ONNX's reference
    CHECK(rm.value()[c] == Approx(mean[c] * 0.8 + mu * 0.2).epsilon(1e-6));
    CHECK(rv.value()[c] == Approx(var[c] * 0.8 + sigma2 * 0.2).epsilon(1e-6));
    for (int k = 0; k < 4; ++k) {
      const int at = (k / 2) * 4 + 2 * c + k % 2;
      CHECK(y.value()[at] == Approx((v[k] - mu) / std::sqrt(sigma2 + eps) * gamma[c] + beta[c]).epsilon(1e-5));
    }
  }
}

TEST_CASE("ONNX BatchNormalization in inference mode refuses a read of its running statistics", "[onnx][errors]") {
  OnnxModel m(15);
  m.input("x", {2, 2, 2});
  m.floats("gamma", {2}, {1, 1}).floats("beta", {2}, {0, 0}).floats("mean", {2}, {0, 0}).floats("var", {2}, {1, 1});
  m.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y", "running_mean", "running_var"}, "bn");
  m.output("y").output("running_mean");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("output 1 (updated running statistics)") &&
                                       Catch::Contains("inference mode"));
}
