// End to end: a small CNN (conv-BN-ReLU-pool, conv-ReLU, linear) built with ModelBuilder learns a
// synthetic image task (vertical bar / horizontal bar / square, at random places, in noise) that
// needs its convolutions, batch norm in training form and pooling to all pass gradients. The
// held-out loss must fall below a threshold that the untrained model is far from.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

constexpr int64_t kBatch = 16, kSide = 8, kClasses = 3;

struct Batch {
  std::vector<float> images;    // [kBatch, 1, kSide, kSide]
  std::vector<int64_t> labels;  // [kBatch]
};

// Class 0: a vertical bar, 1: a horizontal bar, 2: a 3x3 square; each at a random place, in
// uniform noise. Separable, but not by any single pixel.
Batch make_batch(std::mt19937& gen) {
  std::uniform_int_distribution<int64_t> cls(0, kClasses - 1), pos(0, kSide - 1), corner(0, kSide - 3);
  std::uniform_real_distribution<float> noise(-0.3f, 0.3f);
  Batch b;
  b.images.resize(static_cast<size_t>(kBatch * kSide * kSide));
  for (float& v : b.images) v = noise(gen);
  for (int64_t n = 0; n < kBatch; ++n) {
    const int64_t label = cls(gen);
    b.labels.push_back(label);
    float* img = b.images.data() + n * kSide * kSide;
    if (label == 0) {
      const int64_t col = pos(gen);
      for (int64_t y = 0; y < kSide; ++y) img[y * kSide + col] += 1.0f;
    } else if (label == 1) {
      const int64_t row = pos(gen);
      for (int64_t x = 0; x < kSide; ++x) img[row * kSide + x] += 1.0f;
    } else {
      const int64_t top = corner(gen), left = corner(gen);
      for (int64_t y = top; y < top + 3; ++y)
        for (int64_t x = left; x < left + 3; ++x) img[y * kSide + x] += 1.0f;
    }
  }
  return b;
}

Result<Graph> build_cnn() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kBatch, 1, kSide, kSide});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  const TensorId w1 = b.parameter_kaiming_uniform("conv1.weight", {8, 1, 3, 3}, 1);
  const TensorId b1 = b.parameter_kaiming_uniform("conv1.bias", {8}, 2, 9);
  TensorId h = b.named("conv1").conv2d(image, w1, b1, same);
  h = b.named("bn1").batch_norm(h, b.parameter_fill("bn1.weight", {8}, 1.0f), b.parameter_fill("bn1.bias", {8}, 0.0f),
                                b.state("bn1.running_mean", {8}, std::vector<float>(8, 0.0f)),
                                b.state("bn1.running_var", {8}, std::vector<float>(8, 1.0f)));
  Pool2dOptions pool;
  pool.kernel = {2, 2};
  h = b.max_pool2d(b.relu(h), pool);  // [N, 8, 4, 4]
  const TensorId w2 = b.parameter_kaiming_uniform("conv2.weight", {16, 8, 3, 3}, 3);
  const TensorId b2 = b.parameter_kaiming_uniform("conv2.bias", {16}, 4, 72);
  h = b.relu(b.named("conv2").conv2d(h, w2, b2, same));  // [N, 16, 4, 4]
  const TensorId fc_w = b.parameter_kaiming_uniform("fc.weight", {kClasses, 256}, 5);
  const TensorId fc_b = b.parameter_kaiming_uniform("fc.bias", {kClasses}, 6, 256);
  b.output(b.named("fc").linear(b.flatten(h), fc_w, fc_b), "logits");
  return b.finish();
}

Result<float> eval_loss(Engine& engine, const Batch& batch) {
  POCK_RETURN_IF_ERROR(engine.set_input("image", batch.images));
  POCK_RETURN_IF_ERROR(engine.set_input("label", batch.labels));
  return engine.eval_step();
}

}  // namespace

TEST_CASE("A small CNN trains on a synthetic image task", "[train][conv]") {
  auto graph = build_cnn();
  INFO(graph.status().to_string());
  REQUIRE(graph.is_ok());
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.05;
  recipe.optimizer.momentum = 0.9;
  auto blob = compile(graph.value(), &recipe);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());

  std::mt19937 held_out_gen(1234);
  const Batch held_out = make_batch(held_out_gen);
  auto before = eval_loss(engine.value(), held_out);
  REQUIRE(before.is_ok());

  std::mt19937 gen(7);
  for (int step = 0; step < 60; ++step) {
    const Batch batch = make_batch(gen);
    REQUIRE(engine->set_input("image", batch.images).is_ok());
    REQUIRE(engine->set_input("label", batch.labels).is_ok());
    auto loss = engine->train_step();
    INFO("step " << step << ": " << loss.status().to_string());
    REQUIRE(loss.is_ok());
    REQUIRE(std::isfinite(loss.value()));
  }
  auto after = eval_loss(engine.value(), held_out);
  REQUIRE(after.is_ok());
  INFO("held-out loss " << before.value() << " -> " << after.value());
  constexpr float kThreshold = 0.15f;  // chance level is ln 3 = 1.10
  CHECK(before.value() > 4 * kThreshold);
  CHECK(after.value() < kThreshold);
}
