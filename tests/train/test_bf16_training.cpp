// Training with recipe precision "bf16" on the cpu backend, where the forward Linear keeps its
// weight's bf16 copy for the input gradient (kernels/cpu/bf16_weight_copy.hpp), against the ref
// backend, which rounds every operand on every read (the oracle):
//   - the weights after several steps agree;
//   - a weight written between steps (set_parameter) is what the next step computes with;
//   - a failed step (NaN batch) rolls back, and the next step equals an engine's that never failed,
//     with the updates interleaved in the backward and with them last (reorder_updates off).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/engine_parameter.hpp"
#include "train/mlp_model.hpp"

using namespace pock;

namespace {

constexpr int64_t kBatch = 32, kIn = 24, kHidden = 40, kClasses = 5;
const char* const kParameters[] = {"w1", "w2", "w3"};

// x -> Linear(w1) -> Relu -> Linear(w2) -> Relu -> Linear(w3) -> logits: w2 and w3 have both a
// forward Linear and an input gradient, so their bf16 copies are kept; w1 (x needs no gradient)
// has none.
Graph build_model() {
  Graph g;
  std::mt19937 gen(7);
  auto init = [&](int64_t rows, int64_t cols) {
    std::uniform_real_distribution<float> d(-1.0f / std::sqrt(static_cast<float>(cols)), 1.0f / std::sqrt(static_cast<float>(cols)));
    std::vector<float> v(static_cast<size_t>(rows * cols));
    for (float& x : v) x = d(gen);
    return v;
  };
  const TensorId x = g.add_input("x", DType::kF32, {kBatch, kIn});
  const TensorId w1 = g.add_parameter_f32("w1", {kHidden, kIn}, init(kHidden, kIn));
  const TensorId w2 = g.add_parameter_f32("w2", {kHidden, kHidden}, init(kHidden, kHidden));
  const TensorId w3 = g.add_parameter_f32("w3", {kClasses, kHidden}, init(kClasses, kHidden));
  TensorId h = g.add_node("Linear", {x, w1}, {}, "fc1").value()[0];
  h = g.add_node("Relu", {h}, {}, "relu1").value()[0];
  h = g.add_node("Linear", {h, w2}, {}, "fc2").value()[0];
  h = g.add_node("Relu", {h}, {}, "relu2").value()[0];
  const TensorId logits = g.add_node("Linear", {h, w3}, {}, "fc3", {"logits"}).value()[0];
  (void)g.mark_output(logits);
  return g;
}

// The engine reads the blob in place: they travel together.
struct Trainer {
  std::shared_ptr<std::vector<uint8_t>> blob;
  Engine engine;
};

Trainer open(const std::string& backend, bool reorder_updates = true) {
  Recipe r = test::classifier_recipe();  // cross entropy
  // SGD: Adam's first steps move each weight by about lr whatever the gradient's size, so a
  // gradient near zero that rounds differently would move it by up to 2 lr.
  r.optimizer.type = "sgd";
  r.optimizer.momentum = 0.9;
  r.optimizer.lr = 0.1;
  r.precision = "bf16";
  CompileOptions options;
  options.reorder_updates = reorder_updates;
  auto blob = compile(build_model(), &r, options);
  REQUIRE(blob.is_ok());
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(blob.value()));
  Engine::Options o;
  o.backend = backend;
  auto engine = Engine::open_buffer(bytes->data(), bytes->size(), o);
  REQUIRE(engine.is_ok());
  return Trainer{bytes, std::move(engine.value())};
}

void feed(Engine& e, int index, bool with_nan = false) {
  std::mt19937 gen(100u + static_cast<uint32_t>(index));
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kBatch * kIn));
  for (float& v : x) v = d(gen);
  if (with_nan) x[3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<int64_t> label(static_cast<size_t>(kBatch));
  for (size_t i = 0; i < label.size(); ++i) label[i] = static_cast<int64_t>((i * 7 + static_cast<size_t>(index)) % kClasses);
  REQUIRE(e.set_input("x", x).is_ok());
  REQUIRE(e.set_input("label", label).is_ok());
}

std::vector<float> parameters(Engine& e) {
  std::vector<float> all;
  for (const char* name : kParameters) {
    const std::vector<float> v = test::parameter_values(e, name);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

// Largest |a - b| over the parameters.
float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// cpu and ref sum the same bf16 products in different orders: f32 rounding apart, which can flip
// a later operand's bf16 rounding (2^-9 relative) and so reach the weights through lr.
constexpr float kTolerance = 2e-4f;

}  // namespace

TEST_CASE("bf16 training on cpu (kept weight copies) follows ref's, and a set weight is what the next step reads",
          "[train][bf16]") {
  for (const bool reorder : {true, false}) {
    INFO("reorder_updates " << reorder);
    Trainer cpu = open("cpu", reorder), ref = open("ref", reorder);
    const std::vector<float> initial = parameters(cpu.engine);
    for (int s = 0; s < 6; ++s) {
      feed(cpu.engine, s);
      feed(ref.engine, s);
      auto a = cpu.engine.train_step(), b = ref.engine.train_step();
      REQUIRE(a.is_ok());
      REQUIRE(b.is_ok());
      CHECK(std::fabs(a.value() - b.value()) < 1e-4f);
    }
    CHECK(largest_difference(parameters(cpu.engine), initial) > 1e-2f);  // the weights did move
    CHECK(largest_difference(parameters(cpu.engine), parameters(ref.engine)) < kTolerance);

    // A weight written from outside between steps: the next forward must convert it anew.
    std::vector<float> w2 = test::parameter_values(cpu.engine, "w2");
    for (float& v : w2) v = -2.0f * v;
    REQUIRE(cpu.engine.set_parameter("w2", w2.data(), w2.size() * sizeof(float)).is_ok());
    REQUIRE(ref.engine.set_parameter("w2", w2.data(), w2.size() * sizeof(float)).is_ok());
    feed(cpu.engine, 6);
    feed(ref.engine, 6);
    auto a = cpu.engine.train_step(), b = ref.engine.train_step();
    REQUIRE(a.is_ok());
    REQUIRE(b.is_ok());
    CHECK(std::fabs(a.value() - b.value()) < 1e-4f);
    CHECK(largest_difference(parameters(cpu.engine), parameters(ref.engine)) < kTolerance);
  }
}

TEST_CASE("bf16 training on cpu: a failed step rolls back, and the next equals an engine's that never failed",
          "[train][bf16][numerical]") {
  for (const bool reorder : {true, false}) {
    INFO("reorder_updates " << reorder);
    Trainer failing = open("cpu", reorder), twin = open("cpu", reorder);
    for (int s = 0; s < 3; ++s) {
      feed(failing.engine, s);
      feed(twin.engine, s);
      REQUIRE(failing.engine.train_step().is_ok());
      REQUIRE(twin.engine.train_step().is_ok());
    }
    const std::vector<float> before = parameters(failing.engine);
    feed(failing.engine, 3, true);
    auto failed = failing.engine.train_step();
    REQUIRE_FALSE(failed.is_ok());
    CHECK(failed.status().code() == Code::kNumerical);
    CHECK(parameters(failing.engine) == before);

    for (int s = 3; s < 5; ++s) {
      feed(failing.engine, s);
      feed(twin.engine, s);
      REQUIRE(failing.engine.train_step().is_ok());
      REQUIRE(twin.engine.train_step().is_ok());
    }
    CHECK(parameters(failing.engine) == parameters(twin.engine));
  }
}
