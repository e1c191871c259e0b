// Loss values and gradients against hand computations. The model's prediction is a trainable
// parameter W passed through Identity, so the exposed gradient "W.grad" is dL/dprediction.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/grad_check.hpp"

using namespace pock;
using pock::test::random_floats;

namespace {

struct LossRun {
  float train_loss = 0, eval_loss = 0;
  std::vector<float> grad;
};

// Compiles Identity(W) as "pred" with `recipe` (lr 0), feeds `labels`, runs eval and one train step.
template <typename Label>
LossRun run_loss(const Shape& shape, const std::vector<float>& w, Recipe recipe, const std::vector<Label>& labels) {
  Graph g;
  const TensorId p = g.add_parameter_f32("W", shape, w);
  auto pred = g.add_node("Identity", {p}, {}, "pred", {"pred"});
  REQUIRE(pred.is_ok());
  REQUIRE(g.mark_output(pred.value()[0]).is_ok());
  recipe.optimizer.lr = 0.0;
  CompileOptions options;
  options.expose_gradients = true;
  auto blob = compile(g, &recipe, options);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input(recipe.loss.labels, labels).is_ok());
  LossRun run;
  auto eval = engine->eval_step();
  REQUIRE(eval.is_ok());
  run.eval_loss = eval.value();
  auto train = engine->train_step();
  REQUIRE(train.is_ok());
  run.train_loss = train.value();
  auto grad = engine->output<float>("W.grad");
  REQUIRE(grad.is_ok());
  run.grad = grad.value();
  return run;
}

// Cross-entropy by the textbook formula, in double, with its gradient.
struct Expected {
  double loss = 0;
  std::vector<double> grad;
};
Expected cross_entropy(const std::vector<float>& logits, const std::vector<int64_t>& labels, int64_t classes,
                       int64_t ignore, double smoothing) {
  Expected e;
  e.grad.assign(logits.size(), 0.0);
  const size_t rows = labels.size();
  int counted = 0;
  for (size_t r = 0; r < rows; ++r) counted += labels[r] != ignore;
  for (size_t r = 0; r < rows; ++r) {
    if (labels[r] == ignore) continue;
    std::vector<double> p(classes);
    double z = 0;
    for (int64_t c = 0; c < classes; ++c) z += std::exp(static_cast<double>(logits[r * classes + c]));
    for (int64_t c = 0; c < classes; ++c) p[c] = std::exp(static_cast<double>(logits[r * classes + c])) / z;
    double row = -(1 - smoothing) * std::log(p[labels[r]]);
    for (int64_t c = 0; c < classes; ++c) row -= smoothing / classes * std::log(p[c]);
    e.loss += row / counted;
    for (int64_t c = 0; c < classes; ++c) {
      const double target = (c == labels[r] ? 1 - smoothing : 0.0) + smoothing / classes;
      e.grad[r * classes + c] = (p[c] - target) / counted;
    }
  }
  return e;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-6).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("cross_entropy over class logits matches the formula, with ignore_index and smoothing", "[train][loss]") {
  const std::vector<float> logits = random_floats(4 * 5, 1, -2.0f, 2.0f);
  for (double smoothing : {0.0, 0.1}) {
    INFO("label_smoothing " << smoothing);
    Recipe recipe;
    recipe.loss.type = "cross_entropy";
    recipe.loss.ignore_index = -1;
    recipe.loss.label_smoothing = smoothing;
    const std::vector<int64_t> labels{3, -1, 0, 4};
    const LossRun run = run_loss({4, 5}, logits, recipe, labels);
    const Expected want = cross_entropy(logits, labels, 5, -1, smoothing);
    CHECK(run.train_loss == Approx(want.loss).epsilon(1e-5));
    CHECK(run.eval_loss == Approx(want.loss).epsilon(1e-5));
    check_close(run.grad, want.grad);
  }
}

TEST_CASE("cross_entropy over token logits [N, S, C] averages over non-ignored tokens", "[train][loss]") {
  const std::vector<float> logits = random_floats(2 * 3 * 4, 2, -3.0f, 3.0f);
  Recipe recipe;
  recipe.loss.type = "cross_entropy";
  const std::vector<int64_t> labels{1, 2, -100, 0, -100, 3};  // default ignore_index -100
  const LossRun run = run_loss({2, 3, 4}, logits, recipe, labels);
  const Expected want = cross_entropy(logits, labels, 4, -100, 0.0);
  CHECK(run.train_loss == Approx(want.loss).epsilon(1e-5));
  check_close(run.grad, want.grad);
}

TEST_CASE("a label outside the classes fails the step with the label named", "[train][loss]") {
  Graph g;
  const TensorId p = g.add_parameter_f32("W", {2, 3}, random_floats(6, 3));
  auto pred = g.add_node("Identity", {p}, {}, "pred", {"pred"});
  REQUIRE(pred.is_ok());
  REQUIRE(g.mark_output(pred.value()[0]).is_ok());
  Recipe recipe;
  auto blob = compile(g, &recipe);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("label", std::vector<int64_t>{0, 7}).is_ok());
  auto step = engine->train_step();
  REQUIRE_FALSE(step.is_ok());
  CHECK(step.status().message().find("label 7") != std::string::npos);
}

TEST_CASE("mse is the mean squared error against the target input", "[train][loss]") {
  const std::vector<float> w = random_floats(6, 4);
  const std::vector<float> target = random_floats(6, 5);
  Recipe recipe;
  recipe.loss.type = "mse";
  recipe.loss.labels = "target";
  const LossRun run = run_loss({3, 2}, w, recipe, target);
  double loss = 0;
  std::vector<double> grad(6);
  for (size_t i = 0; i < 6; ++i) {
    const double d = static_cast<double>(w[i]) - target[i];
    loss += d * d / 6;
    grad[i] = 2 * d / 6;
  }
  CHECK(run.train_loss == Approx(loss).epsilon(1e-5));
  CHECK(run.eval_loss == Approx(loss).epsilon(1e-5));
  check_close(run.grad, grad);
}

TEST_CASE("loss type output trains on the model's own scalar", "[train][loss]") {
  // L = sum(W * W): dL/dW = 2 W.
  const std::vector<float> w{0.5f, -1.0f, 2.0f};
  Graph g;
  const TensorId p = g.add_parameter_f32("W", {3}, w);
  auto sq = g.add_node("Mul", {p, p});
  REQUIRE(sq.is_ok());
  auto sum = g.add_node("ReduceSum", {sq.value()[0]}, Attrs{{"keepdims", int64_t{0}}}, "total", {"total"});
  REQUIRE(sum.is_ok());
  REQUIRE(g.mark_output(sum.value()[0]).is_ok());
  Recipe recipe;
  recipe.loss.type = "output";
  recipe.optimizer.lr = 0.0;
  CompileOptions options;
  options.expose_gradients = true;
  auto blob = compile(g, &recipe, options);
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  auto loss = engine->train_step();
  REQUIRE(loss.is_ok());
  CHECK(loss.value() == Approx(0.25 + 1.0 + 4.0));
  auto grad = engine->output<float>("W.grad");
  REQUIRE(grad.is_ok());
  CHECK(grad.value() == std::vector<float>{1.0f, -2.0f, 4.0f});  // a multiple-use input: the two Mul operands add up
}

TEST_CASE("loss gradients also match finite differences", "[train][loss][grad]") {
  const test::HostTensor logits = test::HostTensor::f32({3, 4}, random_floats(12, 6, -2.0f, 2.0f));
  const test::HostTensor labels = test::HostTensor::i64({3}, {2, -100, 0});
  CHECK(test::check_op_gradients("SoftmaxCrossEntropy", {logits, labels}, Attrs{{"label_smoothing", 0.2}}, {true, false}));
  const test::HostTensor tokens = test::HostTensor::f32({2, 2, 3}, random_floats(12, 7, -2.0f, 2.0f));
  CHECK(test::check_op_gradients("SoftmaxCrossEntropy", {tokens, test::HostTensor::i64({2, 2}, {0, 1, 2, 1})}, {}, {true, false}));
  const test::HostTensor pred = test::HostTensor::f32({2, 3}, random_floats(6, 8));
  const test::HostTensor target = test::HostTensor::f32({2, 3}, random_floats(6, 9));
  CHECK(test::check_op_gradients("MseLoss", {pred, target}, {}, {true, true}));
}
