// ONNX import of SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss: which pock ops each form
// becomes, and the loss (and log_prob) against ONNX's defining formula written out here.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx_test_run.hpp"

using namespace pock;
using pock::testing::import_model;
using pock::testing::OnnxModel;
using pock::testing::ops_of;

namespace {

// Scores [N=2, C=3, d=2] and labels [2, 2]; label 1 is ignored where ignore_index is set.
const std::vector<float> kScores{0.5f, -1.0f, 2.0f, 0.25f, -0.5f, 1.5f, 1.0f, 0.0f, -2.0f, 0.75f, 3.0f, -1.0f};
const std::vector<int64_t> kLabels{2, 0, 1, 1};
const std::vector<float> kWeight{0.5f, 2.0f, 1.25f};

// log_softmax over the class axis of kScores.
std::vector<double> log_prob() {
  std::vector<double> lp(kScores.size());
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 2; ++d) {
      double sum = 0;
      for (int c = 0; c < 3; ++c) sum += std::exp(kScores[static_cast<size_t>((n * 3 + c) * 2 + d)]);
      for (int c = 0; c < 3; ++c) {
        const size_t i = static_cast<size_t>((n * 3 + c) * 2 + d);
        lp[i] = kScores[i] - std::log(sum);
      }
    }
  }
  return lp;
}

// ONNX's SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss over a log_prob.
double onnx_loss(const std::vector<double>& lp, bool weighted, const std::string& reduction, bool ignore_1) {
  double total = 0, weights = 0;
  for (int r = 0; r < 4; ++r) {
    const int64_t t = kLabels[static_cast<size_t>(r)];
    if (ignore_1 && t == 1) continue;
    const double w = weighted ? kWeight[static_cast<size_t>(t)] : 1.0;
    total += -w * lp[static_cast<size_t>(((r / 2) * 3 + t) * 2 + r % 2)];
    weights += w;
  }
  return reduction == "sum" ? total : total / weights;
}

OnnxModel loss_model(const std::string& op, bool weighted, const std::string& reduction, bool ignore_1, bool read_log_prob) {
  OnnxModel m(13);
  m.input("x", {2, 3, 2});
  m.ints("labels", {2, 2}, kLabels);
  std::vector<std::string> in{"x", "labels"};
  if (weighted) {
    m.floats("weight", {3}, kWeight);
    in.push_back("weight");
  }
  std::vector<std::string> out{"loss"};
  if (read_log_prob) out.push_back("log_prob");
  auto& n = m.node(op, in, out, "loss");
  OnnxModel::attr(n, "reduction", reduction);
  if (ignore_1) OnnxModel::attr(n, "ignore_index", int64_t{1});
  m.output("loss");
  if (read_log_prob) m.output("log_prob");
  return m;
}

struct Outputs {
  std::vector<float> loss, log_prob;
};

Outputs run(const Graph& g, const std::vector<float>& x, bool read_log_prob) {
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("x", x).is_ok());
  REQUIRE(engine->infer().is_ok());
  Outputs o;
  auto loss = engine->output<float>("loss");
  REQUIRE(loss.is_ok());
  o.loss = loss.value();
  if (read_log_prob) {
    auto lp = engine->output<float>("log_prob");
    REQUIRE(lp.is_ok());
    o.log_prob = lp.value();
  }
  return o;
}

}  // namespace

TEST_CASE("SoftmaxCrossEntropyLoss's mean form takes pock's fused cross-entropy, classes moved last", "[onnx]") {
  for (const bool ignore_1 : {false, true}) {
    auto g = import_model(loss_model("SoftmaxCrossEntropyLoss", false, "mean", ignore_1, false));
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    CHECK(ops_of(g.value()) == std::vector<std::string>{"Transpose", "SoftmaxCrossEntropy"});
    const auto o = run(g.value(), kScores, false);
    REQUIRE(o.loss.size() == 1);
    CHECK(o.loss[0] == Approx(onnx_loss(log_prob(), false, "mean", ignore_1)).epsilon(1e-5));
  }
}

TEST_CASE("SoftmaxCrossEntropyLoss with weights, sum or log_prob is LogSoftmax and NllLoss", "[onnx]") {
  struct Form {
    bool weighted;
    const char* reduction;
    bool ignore_1, read_log_prob;
  };
  for (const Form f : {Form{true, "mean", false, false}, Form{true, "mean", true, false}, Form{false, "sum", true, false},
                       Form{false, "mean", false, true}, Form{true, "sum", false, true}}) {
    INFO("weighted " << f.weighted << " " << f.reduction << " ignore " << f.ignore_1 << " log_prob " << f.read_log_prob);
    auto g = import_model(loss_model("SoftmaxCrossEntropyLoss", f.weighted, f.reduction, f.ignore_1, f.read_log_prob));
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    CHECK(ops_of(g.value()) == std::vector<std::string>{"LogSoftmax", "NllLoss"});
    const auto o = run(g.value(), kScores, f.read_log_prob);
    REQUIRE(o.loss.size() == 1);
    CHECK(o.loss[0] == Approx(onnx_loss(log_prob(), f.weighted, f.reduction, f.ignore_1)).epsilon(1e-5));
    const auto lp = log_prob();
    for (size_t i = 0; i < o.log_prob.size(); ++i) CHECK(o.log_prob[i] == Approx(lp[i]).epsilon(1e-5));
  }
}

TEST_CASE("SoftmaxCrossEntropyLoss with reduction none gives a loss per label", "[onnx]") {
  auto g = import_model(loss_model("SoftmaxCrossEntropyLoss", true, "none", true, false));
  REQUIRE(g.is_ok());
  const auto o = run(g.value(), kScores, false);
  REQUIRE(o.loss.size() == 4);
  const auto lp = log_prob();
  for (int r = 0; r < 4; ++r) {
    const int64_t t = kLabels[static_cast<size_t>(r)];
    const double want = t == 1 ? 0.0 : -kWeight[static_cast<size_t>(t)] * lp[static_cast<size_t>(((r / 2) * 3 + t) * 2 + r % 2)];
    CHECK(o.loss[static_cast<size_t>(r)] == Approx(want).epsilon(1e-5).margin(1e-7));
  }
}

TEST_CASE("NegativeLogLikelihoodLoss imports as NllLoss on the model's log-probabilities", "[onnx]") {
  auto g = import_model(loss_model("NegativeLogLikelihoodLoss", true, "mean", true, false));
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  CHECK(ops_of(g.value()) == std::vector<std::string>{"NllLoss"});
  std::vector<float> lp_f;
  for (double v : log_prob()) lp_f.push_back(static_cast<float>(v));
  const auto o = run(g.value(), lp_f, false);
  REQUIRE(o.loss.size() == 1);
  CHECK(o.loss[0] == Approx(onnx_loss(log_prob(), true, "mean", true)).epsilon(1e-5));
}
