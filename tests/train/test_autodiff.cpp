// The reverse-mode driver: pruning to the paths from trainable parameters to the loss, errors
// for ops without a rule, and train-mode lowering of BatchNorm.
#include <cstring>

#include <catch2/catch.hpp>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// loss = sum(w * frozen_branch), where frozen_branch = ReluGrad(x, c) uses an op with no gradient
// rule; the branch depends on no trainable parameter, so it needs none.
Graph graph_with_ruleless_op(bool ruleless_on_trainable_path) {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {3});
  const TensorId w = g.add_parameter_f32("w", {3}, {1, 2, 3});
  const TensorId c = g.add_constant("c", DType::kF32, {3}, f32_bytes({1, -1, 1}));
  const TensorId gated_input = ruleless_on_trainable_path ? w : x;
  const TensorId branch = g.add_node("ReluGrad", {gated_input, c}, {}, "no_rule_here").value()[0];
  const TensorId other = ruleless_on_trainable_path ? x : w;
  const TensorId prod = g.add_node("Mul", {other, branch}).value()[0];
  const TensorId loss = g.add_node("ReduceSum", {prod}, Attrs{{"keepdims", int64_t{0}}}, "total", {"total"}).value()[0];
  (void)g.mark_output(loss);
  return g;
}

}  // namespace

TEST_CASE("ops off the trainable paths need no gradient rule", "[train][autodiff]") {
  Recipe r;
  r.loss.type = "output";
  r.optimizer.lr = 0.0;
  CompileOptions o;
  o.expose_gradients = true;
  auto trainer = compile_trainer(graph_with_ruleless_op(false), r, o);
  REQUIRE(trainer.is_ok());
  // dL/dw = ReluGrad(x, c) = x * (c > 0)
  REQUIRE(trainer->engine.set_input("x", std::vector<float>{4, 5, 6}).is_ok());
  REQUIRE(trainer->engine.train_step().is_ok());
  auto grad = trainer->engine.output<float>("w.grad");
  REQUIRE(grad.is_ok());
  CHECK(grad.value() == std::vector<float>{4, 0, 6});
}

TEST_CASE("an op without a rule on a trainable path is an error naming op and node", "[train][autodiff]") {
  Recipe r;
  r.loss.type = "output";
  auto blob = compile(graph_with_ruleless_op(true), &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(blob.status().code() == Code::kUnsupportedOp);
  CHECK(contains(blob.status().message(), "ReluGrad"));
  CHECK(contains(blob.status().message(), "no_rule_here"));
}

TEST_CASE("a parameter used by several nodes sums its gradient contributions", "[train][autodiff]") {
  // L = sum(w * a) + sum(w * w) + sum(relu(w)): dL/dw = a + 2 w + (w > 0).
  Graph g;
  const std::vector<float> w0{0.5f, -1.0f, 2.0f}, a{3.0f, 4.0f, -5.0f};
  const TensorId w = g.add_parameter_f32("w", {3}, w0);
  const TensorId at = g.add_constant("a", DType::kF32, {3}, f32_bytes(a));
  auto sum_of = [&](TensorId t) { return g.add_node("ReduceSum", {t}, Attrs{{"keepdims", int64_t{0}}}).value()[0]; };
  const TensorId t1 = sum_of(g.add_node("Mul", {w, at}).value()[0]);
  const TensorId t2 = sum_of(g.add_node("Mul", {w, w}).value()[0]);
  const TensorId t3 = sum_of(g.add_node("Relu", {w}).value()[0]);
  const TensorId l = g.add_node("Add", {g.add_node("Add", {t1, t2}).value()[0], t3}, {}, "L", {"L"}).value()[0];
  REQUIRE(g.mark_output(l).is_ok());
  Recipe r;
  r.loss.type = "output";
  r.optimizer.lr = 0.0;
  CompileOptions o;
  o.expose_gradients = true;
  auto trainer = compile_trainer(g, r, o);
  REQUIRE(trainer.is_ok());
  REQUIRE(trainer->engine.train_step().is_ok());
  auto grad = trainer->engine.output<float>("w.grad");
  REQUIRE(grad.is_ok());
  CHECK(grad.value() == std::vector<float>{3 + 1 + 1, 4 - 2 + 0, -5 + 4 + 1});
}

TEST_CASE("a model whose loss no trainable parameter affects is refused", "[train][autodiff]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {3});
  (void)g.add_parameter_f32("unused", {3}, {1, 2, 3});
  const TensorId l = g.add_node("ReduceSum", {x}, Attrs{{"keepdims", int64_t{0}}}, "L", {"L"}).value()[0];
  REQUIRE(g.mark_output(l).is_ok());
  Recipe r;
  r.loss.type = "output";
  auto blob = compile(g, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "no trainable parameter influences the loss"));
}

namespace {

// x [4, 2] -> BatchNorm(gamma, beta, mean, var) -> Linear -> logits.
Graph bn_model() {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4, 2});
  const TensorId gamma = g.add_parameter_f32("bn.weight", {2}, {1, 1});
  const TensorId beta = g.add_parameter_f32("bn.bias", {2}, {0, 0});
  const TensorId mean = g.add_parameter_f32("bn.running_mean", {2}, {0, 0});
  const TensorId var = g.add_parameter_f32("bn.running_var", {2}, {1, 1});
  const TensorId w = g.add_parameter_f32("fc.weight", {3, 2}, {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f});
  const TensorId h = g.add_node("BatchNorm", {x, gamma, beta, mean, var}, {}, "bn").value()[0];
  const TensorId logits = g.add_node("Linear", {h, w}, {}, "fc", {"logits"}).value()[0];
  (void)g.mark_output(logits);
  return g;
}

std::vector<float> read_state(Engine& e, const char* name) {
  std::vector<float> v(2);
  REQUIRE(e.get_output(name, v.data(), 8).is_ok());
  return v;
}

}  // namespace

TEST_CASE("BatchNorm trains with batch statistics and updates its running stats", "[train][autodiff][batchnorm]") {
  Recipe r;
  r.loss.logits = "logits";
  auto trainer = compile_trainer(bn_model(), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(e.set_input("x", x).is_ok());
  REQUIRE(e.set_input("label", std::vector<int64_t>{0, 1, 2, 0}).is_ok());
  REQUIRE(e.train_step().is_ok());
  // PyTorch: running = 0.9 running + 0.1 batch stat (unbiased variance). Column means 4 and 5,
  // unbiased variances 20/3.
  const std::vector<float> mean = read_state(e, "bn.running_mean");
  const std::vector<float> var = read_state(e, "bn.running_var");
  CHECK(mean[0] == Approx(0.4));
  CHECK(mean[1] == Approx(0.5));
  CHECK(var[0] == Approx(0.9 + 0.1 * 20.0 / 3.0));
  CHECK(var[1] == Approx(0.9 + 0.1 * 20.0 / 3.0));
}

TEST_CASE("freeze_batchnorm_stats keeps a frozen layer's BatchNorm in inference form", "[train][autodiff][batchnorm]") {
  Recipe r;
  r.loss.logits = "logits";
  r.freeze_batchnorm_stats = true;
  r.trainable = {TrainableRule{"fc.*"}};
  auto trainer = compile_trainer(bn_model(), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  REQUIRE(e.set_input("x", std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}).is_ok());
  REQUIRE(e.set_input("label", std::vector<int64_t>{0, 1, 2, 0}).is_ok());
  REQUIRE(e.train_step().is_ok());
  std::vector<float> mean(2);
  REQUIRE(e.get_parameter("bn.running_mean", mean.data(), 8).is_ok());
  CHECK(mean == std::vector<float>{0, 0});
}
