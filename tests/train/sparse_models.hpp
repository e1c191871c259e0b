// Shared by the sparse-BP tests (test_sparse_*.cpp): a small CNN and a small transformer-like
// model with PyTorch / Hugging Face parameter names, their inputs, and helpers to compile them
// and read tensors back.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace pock::test {

// ---- small CNN -------------------------------------------------------------------------------
// image [2, 3, 8, 8] -> conv0(+bias) -> bn0 -> relu -> conv1(no bias) -> bn1 -> relu
// -> conv2 1x1 (+bias) -> relu -> global avg pool -> flatten -> fc(+bias) -> logits [2, 4].
// Layers in forward order: conv0, bn0, conv1, bn1, conv2, fc. The BatchNorm running statistics
// are parameters here (as an importer may leave them), so the selection must exclude them.
constexpr int64_t kCnnBatch = 2, kCnnClasses = 4;

inline Result<Graph> build_sparse_cnn() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kCnnBatch, 3, 8, 8});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  auto bn = [&](const std::string& name, TensorId x, int64_t c, uint64_t seed) {
    return b.named(name).batch_norm(x, b.parameter_uniform(name + ".weight", {c}, 0.5, seed),
                                    b.parameter_uniform(name + ".bias", {c}, 0.5, seed + 1),
                                    b.parameter(name + ".running_mean", {c}, std::vector<float>(c, 0.1f)),
                                    b.parameter(name + ".running_var", {c}, std::vector<float>(c, 1.5f)));
  };
  TensorId h = b.named("conv0").conv2d(image, b.parameter_kaiming_uniform("conv0.weight", {8, 3, 3, 3}, 1),
                                       b.parameter_kaiming_uniform("conv0.bias", {8}, 2, 27), same);
  h = b.relu(bn("bn0", h, 8, 3));
  h = b.named("conv1").conv2d(h, b.parameter_kaiming_uniform("conv1.weight", {16, 8, 3, 3}, 5), kNoTensor, same);
  h = b.relu(bn("bn1", h, 16, 6));
  h = b.named("conv2").conv2d(h, b.parameter_kaiming_uniform("conv2.weight", {16, 16, 1, 1}, 8),
                              b.parameter_kaiming_uniform("conv2.bias", {16}, 9, 16));
  h = b.flatten(b.global_avg_pool(b.relu(h)));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kCnnClasses, 16}, 10),
                                b.parameter_kaiming_uniform("fc.bias", {kCnnClasses}, 11, 16)),
           "logits");
  return b.finish();
}

struct CnnBatch {
  std::vector<float> image;
  std::vector<int64_t> label;
};

inline CnnBatch make_cnn_batch(uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  CnnBatch b;
  b.image.resize(kCnnBatch * 3 * 8 * 8);
  for (float& v : b.image) v = pixel(gen);
  for (int64_t n = 0; n < kCnnBatch; ++n) b.label.push_back(static_cast<int64_t>(gen() % kCnnClasses));
  return b;
}

// ---- small transformer -----------------------------------------------------------------------
// tokens [2, 4] -> embed_tokens -> 2 blocks -> lm_head -> logits [2, 4, 10]. A block:
//   a = LayerNorm(x) -> q, k, v = Linear(+bias) -> softmax(q kᵀ) v -> o_proj (a MatMul with a
//   transposed [N, K] weight, no bias) -> x += ;
//   m = LayerNorm(x) -> fc1 Linear(+bias) -> Gelu -> fc2 (a MatMul with a [K, N] weight followed
//   by an Add of "mlp.fc2.b", a bias not named *.bias) -> x += .
// Layers: embed_tokens, then per block input_layernorm, q, k, v, o, post_attention_layernorm,
// fc1, fc2 (8 per block), then lm_head: 18 in all.
constexpr int64_t kTokens = 4, kSeqBatch = 2, kVocab = 10, kDim = 8, kFfn = 16, kBlocks = 2;

inline Result<Graph> build_sparse_transformer() {
  ModelBuilder b;
  uint64_t seed = 100;
  auto param = [&](const std::string& name, Shape shape) {
    return b.parameter_uniform(name, std::move(shape), 0.4, seed++);
  };
  const TensorId tokens = b.input("tokens", DType::kI64, {kSeqBatch, kTokens});
  TensorId x = b.named("embed").embedding(param("model.embed_tokens.weight", {kVocab, kDim}), tokens);
  for (int64_t i = 0; i < kBlocks; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const TensorId a = b.named(p + "ln1").layer_norm(x, param(p + "input_layernorm.weight", {kDim}),
                                                     param(p + "input_layernorm.bias", {kDim}));
    auto proj = [&](const char* name) {
      const std::string q = p + "self_attn." + name;
      return b.named(q).linear(a, param(q + ".weight", {kDim, kDim}), param(q + ".bias", {kDim}));
    };
    const TensorId q = proj("q_proj"), k = proj("k_proj"), v = proj("v_proj");
    const TensorId attn = b.matmul(b.softmax(b.scale_shift(b.matmul(q, k, false, true), 0.35)), v);
    x = b.add(x, b.named(p + "o_proj").matmul(attn, param(p + "self_attn.o_proj.weight", {kDim, kDim}), false, true));
    const TensorId m = b.named(p + "ln2").layer_norm(x, param(p + "post_attention_layernorm.weight", {kDim}),
                                                     param(p + "post_attention_layernorm.bias", {kDim}));
    TensorId f = b.gelu(b.named(p + "fc1").linear(m, param(p + "mlp.fc1.weight", {kFfn, kDim}),
                                                  param(p + "mlp.fc1.bias", {kFfn})));
    f = b.add(b.named(p + "fc2").matmul(f, param(p + "mlp.fc2.weight", {kFfn, kDim})), param(p + "mlp.fc2.b", {kDim}));
    x = b.add(x, f);
  }
  b.output(b.named("lm_head").linear(x, param("lm_head.weight", {kVocab, kDim})), "logits");
  return b.finish();
}

struct TokenBatch {
  std::vector<int64_t> tokens, label;
};

inline TokenBatch make_token_batch(uint32_t seed) {
  std::mt19937 gen(seed);
  TokenBatch b;
  for (int64_t i = 0; i < kSeqBatch * kTokens; ++i) {
    b.tokens.push_back(static_cast<int64_t>(gen() % kVocab));
    b.label.push_back(static_cast<int64_t>(gen() % kVocab));
  }
  return b;
}

// ---- compiling and reading back --------------------------------------------------------------

// A compiled blob and its engine; the engine reads the blob in place, so they travel together.
struct Compiled {
  std::shared_ptr<std::vector<uint8_t>> blob;
  Engine engine;
};

// `backend`: the engine's preferred backend ("ref", "cpu"; empty: as the blob says).
inline Result<Compiled> compile_engine(const Graph& g, const Recipe& recipe, const CompileOptions& options = {},
                                       const std::string& backend = {}) {
  auto blob = compile(g, &recipe, options);
  if (!blob.is_ok()) return blob.status();
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(blob.value()));
  EngineConfig config;
  config.backend = backend;
  auto engine = Engine::open_buffer(bytes->data(), bytes->size(), config);
  if (!engine.is_ok()) return engine.status();
  return Compiled{bytes, std::move(engine.value())};
}

// SGD with lr 0 keeps the weights, so gradients of the same step can be compared across programs.
inline Recipe gradient_recipe(std::vector<TrainableRule> rules) {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.0;
  r.trainable = std::move(rules);
  return r;
}

inline TrainableRule rule_match(std::string glob) {
  TrainableRule r;
  r.match = std::move(glob);
  return r;
}
inline TrainableRule rule_layers(std::string span, bool bias_only = false) {
  TrainableRule r;
  r.layers = std::move(span);
  r.bias_only = bias_only;
  return r;
}
inline TrainableRule rule_bias_only() {
  TrainableRule r;
  r.bias_only = true;
  return r;
}
inline TrainableRule rule_channels(std::string glob, int64_t count) {
  TrainableRule r = rule_match(std::move(glob));
  r.channels = count;
  return r;
}
inline TrainableRule rule_ratio(std::string glob, double ratio) {
  TrainableRule r = rule_match(std::move(glob));
  r.channel_ratio = ratio;
  return r;
}

inline Result<std::vector<float>> read_floats(Engine& e, const std::string& name, bool parameter) {
  auto info = e.info(name);
  if (!info.is_ok()) return info.status();
  std::vector<float> v(info->nbytes / sizeof(float));
  POCK_RETURN_IF_ERROR(parameter ? e.get_parameter(name, v.data(), info->nbytes)
                                 : e.get_output(name, v.data(), info->nbytes));
  return v;
}

}  // namespace pock::test
