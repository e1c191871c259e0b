// Shared by the training tests: a small MLP built with the Graph API and a synthetic task that it
// can separate (three Gaussian blobs in 4-D).
#pragma once
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace pock::test {

constexpr int64_t kFeatures = 4, kHidden = 16, kClasses = 3, kBatch = 16;

struct MlpOptions {
  double dropout = 0.0;  // a Dropout after the hidden activation when > 0
  uint32_t seed = 1;
  std::string prefix;  // prepended to every parameter name (long names exercise lookups past SSO)
};

// x [B, 4] -> Linear(fc1) -> Relu [-> Dropout] -> Linear(fc2) -> logits [B, 3]; PyTorch-style
// uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) initialization.
inline Graph build_mlp(const MlpOptions& o = {}) {
  Graph g;
  std::mt19937 gen(o.seed);
  auto init = [&](int64_t n, int64_t fan_in) {
    std::uniform_real_distribution<float> d(-1.0f / std::sqrt(static_cast<float>(fan_in)), 1.0f / std::sqrt(static_cast<float>(fan_in)));
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(gen);
    return v;
  };
  const TensorId x = g.add_input("x", DType::kF32, {kBatch, kFeatures});
  const TensorId w1 = g.add_parameter_f32(o.prefix + "fc1.weight", {kHidden, kFeatures}, init(kHidden * kFeatures, kFeatures));
  const TensorId b1 = g.add_parameter_f32(o.prefix + "fc1.bias", {kHidden}, init(kHidden, kFeatures));
  const TensorId w2 = g.add_parameter_f32(o.prefix + "fc2.weight", {kClasses, kHidden}, init(kClasses * kHidden, kHidden));
  const TensorId b2 = g.add_parameter_f32(o.prefix + "fc2.bias", {kClasses}, init(kClasses, kHidden));
  TensorId h = g.add_node("Linear", {x, w1, b1}, {}, "fc1").value()[0];
  h = g.add_node("Relu", {h}, {}, "relu").value()[0];
  if (o.dropout > 0) h = g.add_node("Dropout", {h}, Attrs{{"ratio", o.dropout}}, "dropout").value()[0];
  const TensorId logits = g.add_node("Linear", {h, w2, b2}, {}, "fc2", {"logits"}).value()[0];
  (void)g.mark_output(logits);
  return g;
}

struct Batch {
  std::vector<float> x;
  std::vector<int64_t> label;
};

// Batch `index` of the task: class c is centred at a fixed point, with noise 0.5.
inline Batch make_batch(int index) {
  static const float centres[kClasses][kFeatures] = {{2, 0, 0, -1}, {-2, 1, 0, 1}, {0, -2, 2, 0}};
  std::mt19937 gen(1000u + static_cast<uint32_t>(index));
  std::normal_distribution<float> noise(0.0f, 0.5f);
  std::uniform_int_distribution<int> cls(0, kClasses - 1);
  Batch b;
  for (int64_t i = 0; i < kBatch; ++i) {
    const int c = cls(gen);
    b.label.push_back(c);
    for (int64_t f = 0; f < kFeatures; ++f) b.x.push_back(centres[c][f] + noise(gen));
  }
  return b;
}

// A compiled model and its engine; the engine reads the blob in place, so they travel together.
struct Trainer {
  std::shared_ptr<std::vector<uint8_t>> blob;
  Engine engine;
};

inline Result<Trainer> compile_trainer(const Graph& g, const Recipe& recipe, const CompileOptions& options = {}) {
  auto blob = compile(g, &recipe, options);
  if (!blob.is_ok()) return blob.status();
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(blob.value()));
  auto engine = Engine::open_buffer(bytes->data(), bytes->size());
  if (!engine.is_ok()) return engine.status();
  return Trainer{bytes, std::move(engine.value())};
}

inline Status feed(Engine& e, const Batch& b) {
  POCK_RETURN_IF_ERROR(e.set_input("x", b.x));
  return e.set_input("label", b.label);
}

inline Recipe classifier_recipe() {
  Recipe r;
  r.loss.type = "cross_entropy";
  r.loss.logits = "logits";
  r.loss.labels = "label";
  r.optimizer.type = "adam";
  r.optimizer.lr = 0.02;
  return r;
}

}  // namespace pock::test
