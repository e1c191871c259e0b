// Shared by the fusion and schedule tests: a small CNN with the patterns the optimization passes
// rewrite, and helpers to compile it, run it and compare two builds of it.
//   c1: Conv2d(bias)                          -> BatchNorm -> Relu6
//   c2: depthwise Conv2d(no bias) -> Add(per-channel constant) -> BatchNorm -> Relu6
//   c3: 1x1 Conv2d(bias) -> Relu                 (no BatchNorm: its ReluGrad reads the conv output)
//   GlobalAvgPool -> Flatten
//   fc1: Linear(no bias) -> Add(fc1.bias) -> Relu6   (the bias as a separate Add of a parameter)
//   fc2: Linear(bias) -> logits
#pragma once
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "blob/reader.hpp"
#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/engine_parameter.hpp"

namespace pock::test {

constexpr int64_t kCnnBatch = 4, kCnnSide = 8, kCnnClasses = 4;

inline std::vector<float> uniform_values(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// BatchNorm with non-trivial statistics, so that folding has something to fold.
inline TensorId cnn_batch_norm(ModelBuilder& b, const std::string& name, TensorId x, int64_t channels,
                               uint32_t seed) {
  const size_t c = static_cast<size_t>(channels);
  return b.named(name).batch_norm(x, b.parameter(name + ".weight", {channels}, uniform_values(c, 0.5f, 1.5f, seed)),
                                  b.parameter(name + ".bias", {channels}, uniform_values(c, -0.3f, 0.3f, seed + 1)),
                                  b.state(name + ".running_mean", {channels}, uniform_values(c, -0.2f, 0.2f, seed + 2)),
                                  b.state(name + ".running_var", {channels}, uniform_values(c, 0.5f, 2.0f, seed + 3)));
}

inline Graph build_small_cnn() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kCnnBatch, 3, kCnnSide, kCnnSide});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  TensorId h = b.named("c1").conv2d(image, b.parameter_kaiming_uniform("c1.weight", {8, 3, 3, 3}, 1),
                                    b.parameter_kaiming_uniform("c1.bias", {8}, 2, 27), same);
  h = b.relu6(cnn_batch_norm(b, "bn1", h, 8, 10));
  Conv2dOptions depthwise = same;
  depthwise.groups = 8;
  h = b.named("c2").conv2d(h, b.parameter_kaiming_uniform("c2.weight", {8, 1, 3, 3}, 3), kNoTensor, depthwise);
  h = b.add(h, b.constant("c2.shift", {1, 8, 1, 1}, uniform_values(8, -0.5f, 0.5f, 4)));
  h = b.relu6(cnn_batch_norm(b, "bn2", h, 8, 20));
  h = b.relu(b.named("c3").conv2d(h, b.parameter_kaiming_uniform("c3.weight", {16, 8, 1, 1}, 5),
                                  b.parameter_kaiming_uniform("c3.bias", {16}, 6, 8)));
  h = b.flatten(b.global_avg_pool(h));
  h = b.named("fc1").linear(h, b.parameter_kaiming_uniform("fc1.weight", {16, 16}, 7));
  h = b.relu6(b.add(h, b.parameter_kaiming_uniform("fc1.bias", {16}, 8, 16)));
  b.output(b.named("fc2").linear(h, b.parameter_kaiming_uniform("fc2.weight", {kCnnClasses, 16}, 9),
                                 b.parameter_kaiming_uniform("fc2.bias", {kCnnClasses}, 10, 16)),
           "logits");
  auto g = b.finish();
  return std::move(g.value());
}

struct CnnBatch {
  std::vector<float> image;
  std::vector<int64_t> label;
};

inline CnnBatch cnn_batch(uint32_t index) {
  CnnBatch batch;
  batch.image = uniform_values(static_cast<size_t>(kCnnBatch * 3 * kCnnSide * kCnnSide), -2.0f, 2.0f, 100 + index);
  std::mt19937 gen(200 + index);
  for (int64_t i = 0; i < kCnnBatch; ++i) batch.label.push_back(static_cast<int64_t>(gen() % kCnnClasses));
  return batch;
}

// Full backpropagation: every parameter trains, BatchNorm in training form.
inline Recipe full_bp_recipe() {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.05;
  r.optimizer.momentum = 0.9;
  return r;
}

// Sparse: the backbone is frozen (its BatchNorms keep their running statistics), the head trains.
inline Recipe frozen_backbone_recipe() {
  Recipe r = full_bp_recipe();
  TrainableRule head;
  head.match = "fc*";
  r.trainable = {head};
  r.freeze_batchnorm_stats = true;
  return r;
}

inline std::vector<uint8_t> compile_or_fail(const Graph& g, const Recipe* recipe, const CompileOptions& options) {
  auto blob = compile(g, recipe, options);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  return std::move(blob.value());
}

inline ProgramSpec spec_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), {}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

inline const FunctionSpec* find_function(const ProgramSpec& spec, const std::string& name) {
  for (const FunctionSpec& f : spec.functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// How many ops of `op` the function runs.
inline size_t count_ops(const ProgramSpec& spec, const std::string& function, const std::string& op) {
  const FunctionSpec* f = find_function(spec, function);
  size_t n = 0;
  if (f) {
    for (uint32_t i : f->ops) n += spec.ops[i].op == op;
  }
  return n;
}

inline Engine open_engine(const std::vector<uint8_t>& blob, const std::string& backend) {
  Engine::Options options;
  options.backend = backend;
  options.num_threads = 1;
  auto engine = Engine::open_buffer(blob.data(), blob.size(), options);
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  return std::move(engine.value());
}

inline std::vector<float> infer_logits(Engine& engine, const CnnBatch& batch) {
  REQUIRE(engine.set_input("image", batch.image).is_ok());
  const Status s = engine.infer();
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return engine.output<float>("logits").value();
}

inline float train_once(Engine& engine, const CnnBatch& batch) {
  REQUIRE(engine.set_input("image", batch.image).is_ok());
  REQUIRE(engine.set_input("label", batch.label).is_ok());
  auto loss = engine.train_step();
  INFO(loss.status().to_string());
  REQUIRE(loss.is_ok());
  return loss.value();
}

inline std::vector<float> parameter(Engine& engine, const std::string& name) { return parameter_values(engine, name); }

// Largest |a - b| / max(1, |b|) over two equally long vectors.
inline double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::fabs(static_cast<double>(b[i])));
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace pock::test
