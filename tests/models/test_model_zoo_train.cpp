// Every zoo model, at a tiny size, compiles with a full-backprop training recipe and trains: on
// one fixed batch a few SGD steps give finite, falling losses (the training form of BatchNorm,
// the attention and the tied LM head all differentiate), and the gradient reaches the very first
// layer.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "pock/compiler/models.hpp"

using namespace pock;

namespace {

struct Batch {
  std::string input_name;
  std::vector<float> images;    // CNNs
  std::vector<int64_t> tokens;  // transformers
  std::vector<int64_t> labels;
};

Batch image_batch(int64_t batch, int64_t side, int64_t classes) {
  std::mt19937 gen(7);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> label(0, classes - 1);
  Batch b{.input_name = "image"};
  b.images.resize(static_cast<size_t>(batch * 3 * side * side));
  for (float& v : b.images) v = pixel(gen);
  for (int64_t i = 0; i < batch; ++i) b.labels.push_back(label(gen));
  return b;
}

Batch token_batch(int64_t count, int64_t vocab, int64_t label_count, int64_t classes) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int64_t> token(0, vocab - 1), label(0, classes - 1);
  Batch b{.input_name = "input_ids"};
  for (int64_t i = 0; i < count; ++i) b.tokens.push_back(token(gen));
  for (int64_t i = 0; i < label_count; ++i) b.labels.push_back(label(gen));
  return b;
}

Status feed(Engine& e, const Batch& b) {
  if (!b.images.empty()) POCK_RETURN_IF_ERROR(e.set_input(b.input_name, b.images));
  if (!b.tokens.empty()) POCK_RETURN_IF_ERROR(e.set_input(b.input_name, b.tokens));
  return e.set_input("label", b.labels);
}

// Compiles `graph` for full backprop with SGD, trains 4 steps on `batch` and checks the losses and
// the gradient of `first_param` (the model's first layer).
void check_trains(const Result<Graph>& graph, const Batch& batch, const std::string& first_param, double lr) {
  INFO(graph.status().to_string());
  REQUIRE(graph.is_ok());
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = lr;
  CompileOptions options;
  options.expose_gradients = true;
  auto blob = compile(graph.value(), &recipe, options);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->can_train());

  std::vector<float> losses;
  for (int step = 0; step < 4; ++step) {
    REQUIRE(feed(engine.value(), batch).is_ok());
    auto loss = engine->train_step();
    INFO("step " << step << ": " << loss.status().to_string());
    REQUIRE(loss.is_ok());
    REQUIRE(std::isfinite(loss.value()));
    losses.push_back(loss.value());
    if (step == 0) {
      auto grad = engine->output<float>(first_param + ".grad");
      INFO(grad.status().to_string());
      REQUIRE(grad.is_ok());
      double norm = 0;
      for (float g : grad.value()) norm += double(g) * g;
      INFO(first_param << " gradient norm " << norm);
      CHECK(std::isfinite(norm));
      CHECK(norm > 0);
    }
  }
  INFO("losses " << losses[0] << " " << losses[1] << " " << losses[2] << " " << losses[3]);
  CHECK(losses[3] < losses[0]);
}

}  // namespace

TEST_CASE("MobileNetV2 trains a step with full backprop", "[models][train]") {
  models::MobileNetV2Config c;
  c.batch = 4, c.resolution = 32, c.num_classes = 5, c.width_mult = 0.25, c.dropout = 0;
  c.stages = {{1, 8, 1, 1}, {4, 16, 2, 2}};
  check_trains(models::mobilenet_v2(c), image_batch(c.batch, c.resolution, c.num_classes), "features.0.0.weight", 0.05);
}

TEST_CASE("ResNet-18 trains a step with full backprop", "[models][train]") {
  models::ResNetConfig c;
  c.batch = 4, c.resolution = 32, c.num_classes = 5, c.width = 8;
  check_trains(models::resnet18(c), image_batch(c.batch, c.resolution, c.num_classes), "conv1.weight", 0.05);
}

TEST_CASE("The BERT classifier trains a step with full backprop", "[models][train]") {
  models::BertConfig c;
  c.batch = 4, c.seq_len = 8, c.vocab_size = 40, c.hidden_size = 16, c.num_layers = 2, c.num_heads = 2;
  c.intermediate_size = 32, c.max_position_embeddings = 8, c.num_labels = 3;
  c.hidden_dropout = 0, c.attention_dropout = 0;
  check_trains(models::bert_classifier(c), token_batch(c.batch * c.seq_len, c.vocab_size, c.batch, c.num_labels),
               "embeddings.word_embeddings.weight", 0.1);
}

TEST_CASE("The BERT classifier with dropout and an attention mask trains", "[models][train]") {
  models::BertConfig c;
  c.batch = 2, c.seq_len = 4, c.vocab_size = 20, c.hidden_size = 8, c.num_layers = 1, c.num_heads = 2;
  c.intermediate_size = 16, c.max_position_embeddings = 4, c.num_labels = 2, c.attention_mask = true;
  auto graph = models::bert_classifier(c);
  REQUIRE(graph.is_ok());
  Recipe recipe;
  auto blob = compile(graph.value(), &recipe);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("input_ids", std::vector<int64_t>{1, 2, 3, 0, 4, 5, 0, 0}).is_ok());
  REQUIRE(engine->set_input("attention_mask", std::vector<int64_t>{1, 1, 1, 0, 1, 1, 0, 0}).is_ok());
  REQUIRE(engine->set_input("label", std::vector<int64_t>{0, 1}).is_ok());
  auto loss = engine->train_step();
  INFO(loss.status().to_string());
  REQUIRE(loss.is_ok());
  CHECK(std::isfinite(loss.value()));
}

TEST_CASE("The LLaMA decoder (tied, grouped-query) trains a step with full backprop", "[models][train]") {
  models::LlamaConfig c;
  c.batch = 2, c.seq_len = 8, c.vocab_size = 32, c.hidden_size = 16, c.num_layers = 2, c.num_heads = 4;
  c.num_kv_heads = 2, c.intermediate_size = 24;
  // Token-level cross-entropy: labels [B, S] over the vocabulary.
  check_trains(models::llama_causal_lm(c),
               token_batch(c.batch * c.seq_len, c.vocab_size, c.batch * c.seq_len, c.vocab_size),
               "model.embed_tokens.weight", 0.5);
}
