// ONNX's ai.onnx.preview.training optimizers at a step count T > 0, where Adam corrects its
// moments' bias and Momentum weighs the gradient by beta (ONNX's node tests all use T = 0).
// Expected numbers: onnx 1.12's reference functions (onnx.backend.test.case.node.adam.apply_adam,
// adagrad.apply_adagrad, momentum.apply_momentum / apply_nesterov) on the inputs below, as float32.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;

namespace {

const std::vector<float> kX{1.2f, -2.8f, 0.5f}, kG{-0.94f, 2.5f, 0.3f}, kV{1.7f, -3.6f, 0.2f}, kH{0.1f, 0.4f, 2.0f};
constexpr float kRate = 0.1f;
constexpr int64_t kStep = 3;

// One optimizer node over R, T and the named [3] tensors, in the preview domain only.
OnnxModel optimizer(const std::string& op, const std::vector<std::string>& tensors, const std::vector<std::string>& outputs) {
  OnnxModel m(17);
  m.opset("ai.onnx.preview.training", 1);
  m.input("R", {}).input("T", {}, onnx::TensorProto::INT64);
  // A scalar's shape is present and empty (OnnxModel leaves a rank-0 input's shape unset).
  for (int i = 0; i < 2; ++i) m.graph().mutable_input(i)->mutable_type()->mutable_tensor_type()->mutable_shape();
  std::vector<std::string> inputs{"R", "T"};
  for (const auto& t : tensors) {
    m.input(t, {3});
    inputs.push_back(t);
  }
  m.node(op, inputs, outputs, "opt").set_domain("ai.onnx.preview.training");
  for (const auto& o : outputs) m.output(o);
  return m;
}

std::vector<std::vector<float>> run(const OnnxModel& m, const std::vector<std::pair<std::string, std::vector<float>>>& tensors,
                                    const std::vector<std::string>& outputs) {
  auto model = pock::testing::open_model(m);
  Engine* engine = &*model->engine;
  REQUIRE(engine->set_input("R", &kRate, sizeof kRate).is_ok());
  REQUIRE(engine->set_input("T", &kStep, sizeof kStep).is_ok());
  for (const auto& [name, v] : tensors) REQUIRE(engine->set_input(name, v).is_ok());
  REQUIRE(engine->infer().is_ok());
  std::vector<std::vector<float>> out;
  for (const auto& o : outputs) {
    auto v = engine->output<float>(o);
    REQUIRE(v.is_ok());
    out.push_back(v.value());
  }
  return out;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE("preview.training Adam at T > 0 corrects the moments' bias and applies norm_coefficient_post", "[onnx]") {
  OnnxModel m = optimizer("Adam", {"X", "G", "V", "H"}, {"X_new", "V_new", "H_new"});
  auto& n = *m.graph().mutable_node(0);
  OnnxModel::attr(n, "norm_coefficient", 0.001f);
  OnnxModel::attr(n, "norm_coefficient_post", 0.02f);
  const auto out = run(m, {{"X", kX}, {"G", kG}, {"V", kV}, {"H", kH}}, {"X_new", "V_new", "H_new"});
  check_close(out[0], {1.0864431f, -2.6510742f, 0.4870582f});
  check_close(out[1], {1.43612f, -2.9902797f, 0.21004999f});
  check_close(out[2], {0.100781344f, 0.40583602f, 1.9980903f});
}

TEST_CASE("preview.training Adagrad at T > 0 decays the rate", "[onnx]") {
  OnnxModel m = optimizer("Adagrad", {"X", "G", "H"}, {"X_new", "H_new"});
  auto& n = *m.graph().mutable_node(0);
  OnnxModel::attr(n, "norm_coefficient", 0.001f);
  OnnxModel::attr(n, "epsilon", 1e-5f);
  OnnxModel::attr(n, "decay_factor", 0.1f);
  const auto out = run(m, {{"X", kX}, {"G", kG}, {"H", kH}}, {"X_new", "H_new"});
  check_close(out[0], {1.2728978f, -2.8745685f, 0.484012f});
  check_close(out[1], {0.9813454f, 6.636008f, 2.0903003f});
}

TEST_CASE("preview.training Momentum at T > 0 weighs the gradient by beta (standard and nesterov)", "[onnx]") {
  struct Case {
    const char* mode;
    float norm, alpha, beta;
    std::vector<float> x_new, v_new;
  };
  const Case cases[] = {{"standard", 0.001f, 0.95f, 0.1f, {1.047888f, -2.482972f, 0.477995f}, {1.5211201f, -3.1702797f, 0.22004999f}},
                        {"nesterov", 0.01f, 0.95f, 0.8f, {1.209903f, -2.910172f, 0.42826998f}, {0.8726f, -1.4423999f, 0.43400002f}}};
  for (const Case& c : cases) {
    INFO(c.mode);
    OnnxModel m = optimizer("Momentum", {"X", "G", "V"}, {"X_new", "V_new"});
    auto& n = *m.graph().mutable_node(0);
    OnnxModel::attr(n, "norm_coefficient", c.norm);
    OnnxModel::attr(n, "alpha", c.alpha);
    OnnxModel::attr(n, "beta", c.beta);
    OnnxModel::attr(n, "mode", std::string(c.mode));
    const auto out = run(m, {{"X", kX}, {"G", kG}, {"V", kV}}, {"X_new", "V_new"});
    check_close(out[0], c.x_new);
    check_close(out[1], c.v_new);
  }
}

TEST_CASE("an op of another domain is refused naming the domain", "[onnx][errors]") {
  OnnxModel m(17);
  m.opset("com.example", 1);
  m.input("x", {3});
  m.node("Frobnicate", {"x"}, {"y"}, "f").set_domain("com.example");
  m.output("y");
  auto g = import_model(m);
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("domain 'com.example'"));
}
