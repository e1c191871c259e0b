// Sparse backpropagation computes the same gradients as full backpropagation for what it trains:
// the pruned program's gradient of each trainable parameter (CompileOptions::expose_gradients)
// equals the full program's on the same inputs and weights, and under a partial-channel update it
// equals the leading rows of the full gradient. The update touches only those rows: the frozen
// rows stay bit-identical over SGD and Adam steps. Finally the compiled blob of a bias-only scheme
// holds no weight gradients and no input-gradient chain below the first conv.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "blob/reader.hpp"
#include "train/sparse_models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

using Feed = std::function<Status(Engine&)>;

Feed cnn_feed(uint32_t seed) {
  return [seed](Engine& e) {
    const CnnBatch b = make_cnn_batch(seed);
    POCK_RETURN_IF_ERROR(e.set_input("image", b.image));
    return e.set_input("label", b.label);
  };
}

Feed token_feed(uint32_t seed) {
  return [seed](Engine& e) {
    const TokenBatch b = make_token_batch(seed);
    POCK_RETURN_IF_ERROR(e.set_input("tokens", b.tokens));
    return e.set_input("label", b.label);
  };
}

// One train step (lr 0: weights stay) of `g` under `rules`; returns "<param>.grad" of `params`.
std::map<std::string, std::vector<float>> gradients(const Graph& g, std::vector<TrainableRule> rules,
                                                    const std::vector<std::string>& params, const Feed& feed,
                                                    const std::string& backend = "ref") {
  CompileOptions options;
  options.expose_gradients = true;
  auto c = compile_engine(g, gradient_recipe(std::move(rules)), options, backend);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  REQUIRE(feed(c->engine).is_ok());
  auto loss = c->engine.train_step();
  INFO(loss.status().to_string());
  REQUIRE(loss.is_ok());
  std::map<std::string, std::vector<float>> out;
  for (const std::string& p : params) {
    auto grad = read_floats(c->engine, p + ".grad", false);
    INFO(p << ": " << grad.status().to_string());
    REQUIRE(grad.is_ok());
    out[p] = grad.value();
  }
  return out;
}

// The sparse gradient must equal the leading elements of the full one (all of it when the sizes
// agree), to float rounding: both programs run the same ops on the same values.
void check_leading(const std::vector<float>& sparse, const std::vector<float>& full, const std::string& name,
                   size_t expected_size) {
  INFO(name);
  REQUIRE(sparse.size() == expected_size);
  REQUIRE(full.size() >= sparse.size());
  bool nonzero = false;
  for (size_t i = 0; i < sparse.size(); ++i) {
    INFO("element " << i);
    CHECK(sparse[i] == Approx(full[i]).epsilon(1e-5).margin(1e-7));
    nonzero = nonzero || full[i] != 0.0f;
  }
  CHECK(nonzero);  // a gradient of zeros would compare equal for the wrong reason
}

struct Expected {
  std::string name;
  size_t elements;  // of the sparse gradient
};

// On the reference kernels and on the CPU backend (whose kernels fall back to ref where absent).
void compare_with_full(const Graph& g, std::vector<TrainableRule> rules, const std::vector<Expected>& expected,
                       const Feed& feed) {
  std::vector<std::string> names;
  for (const Expected& e : expected) names.push_back(e.name);
  for (const char* backend : {"ref", "cpu"}) {
    INFO("backend " << backend);
    const auto full = gradients(g, {}, names, feed, backend);
    const auto sparse = gradients(g, rules, names, feed, backend);
    for (const Expected& e : expected) check_leading(sparse.at(e.name), full.at(e.name), e.name, e.elements);
  }
}

Graph cnn() {
  auto g = build_sparse_cnn();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

Graph transformer() {
  auto g = build_sparse_transformer();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// Every MatMul gradient case of a partial-channel weight: the weight as operand a or b, each
// transpose combination, and a batched activation against a 2-D weight (summed over the batch).
//   h1 = A1 x             A1 [4, 5]                 x [2, 5, 3] -> [2, 4, 3]
//   h2 = A2ᵀ h1           A2 [4, 6] (transpose_a)   -> [2, 6, 3]
//   h3 = A3ᵀ h2ᵀ          A3 [3, 5] (both)          -> [2, 5, 6]
//   h4 = h3 B1            B1 [6, 4]                 -> [2, 5, 4]
//   h5 = h4ᵀ B2           B2 [5, 3] (transpose_a)   -> [2, 4, 3]
//   logits = h5 B3ᵀ       B3 [2, 3] (transpose_b)   -> [2, 4, 2]
Graph matmul_chain() {
  ModelBuilder b;
  uint64_t seed = 300;
  auto w = [&](const char* name, Shape s) { return b.parameter_uniform(name, std::move(s), 0.6, seed++); };
  TensorId h = b.input("x", DType::kF32, {2, 5, 3});
  h = b.matmul(w("A1", {4, 5}), h);
  h = b.matmul(w("A2", {4, 6}), h, true, false);
  h = b.matmul(w("A3", {3, 5}), h, true, true);
  h = b.matmul(h, w("B1", {6, 4}));
  h = b.matmul(h, w("B2", {5, 3}), true, false);
  b.output(b.matmul(h, w("B3", {2, 3}), false, true), "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

Feed chain_feed() {
  return [](Engine& e) {
    std::vector<float> x(2 * 5 * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) / 5.0f - 1.0f;
    POCK_RETURN_IF_ERROR(e.set_input("x", x));
    return e.set_input("label", std::vector<int64_t>{0, 1, 1, 0, 1, 0, 0, 1});
  };
}

}  // namespace

TEST_CASE("pruned CNN gradients equal the full gradients of the same parameters", "[train][sparse]") {
  const Graph g = cnn();
  SECTION("bias-only") {
    compare_with_full(g, {rule_bias_only()},
                      {{"conv0.bias", 8}, {"bn0.bias", 8}, {"bn1.bias", 16}, {"conv2.bias", 16}, {"fc.bias", 4}},
                      cnn_feed(1));
  }
  SECTION("last layers") {
    compare_with_full(g, {rule_layers("last:2")},
                      {{"conv2.weight", 256}, {"conv2.bias", 16}, {"fc.weight", 64}, {"fc.bias", 4}}, cnn_feed(2));
  }
  SECTION("middle layers, biases everywhere") {
    compare_with_full(g, {rule_layers("1:4"), rule_bias_only()},
                      {{"conv0.bias", 8}, {"bn0.weight", 8}, {"bn0.bias", 8}, {"conv1.weight", 16 * 8 * 9},
                       {"bn1.weight", 16}, {"conv2.bias", 16}},
                      cnn_feed(3));
  }
}

TEST_CASE("partial-channel gradients are the leading rows of the full gradients", "[train][sparse]") {
  SECTION("CNN: Conv2dGradWeight with channels, Linear with a sliced dy") {
    compare_with_full(cnn(), {rule_channels("conv0.weight", 5), rule_channels("conv1.weight", 3),
                              rule_ratio("fc.weight", 0.5)},
                      {{"conv0.weight", 5 * 3 * 9}, {"conv0.bias", 8}, {"conv1.weight", 3 * 8 * 9},
                       {"fc.weight", 2 * 16}, {"fc.bias", 4}},
                      cnn_feed(4));
  }
  SECTION("transformer: Linear, MatMul with [N, K] and [K, N] weights, an embedding table") {
    compare_with_full(transformer(),
                      {rule_channels("model.layers.1.self_attn.q_proj.weight", 3),
                       rule_channels("model.layers.0.self_attn.o_proj.weight", 6),
                       rule_channels("model.layers.1.mlp.fc2.weight", 5), rule_ratio("model.embed_tokens.weight", 0.5),
                       rule_channels("lm_head.weight", 4)},
                      {{"model.layers.1.self_attn.q_proj.weight", 3 * kDim},
                       {"model.layers.1.self_attn.q_proj.bias", kDim},
                       {"model.layers.0.self_attn.o_proj.weight", 6 * kDim},
                       {"model.layers.1.mlp.fc2.weight", 5 * kDim},
                       {"model.layers.1.mlp.fc2.b", kDim},
                       {"model.embed_tokens.weight", 5 * kDim},
                       {"lm_head.weight", 4 * kDim}},
                      token_feed(5));
  }
  SECTION("every MatMul operand and transpose case") {
    compare_with_full(matmul_chain(),
                      {rule_channels("A1", 3), rule_channels("A2", 2), rule_channels("A3", 1), rule_channels("B1", 4),
                       rule_channels("B2", 2), rule_channels("B3", 1)},
                      {{"A1", 3 * 5}, {"A2", 2 * 6}, {"A3", 1 * 5}, {"B1", 4 * 4}, {"B2", 2 * 3}, {"B3", 1 * 3}},
                      chain_feed());
  }
}

namespace {

struct PartialWeight {
  std::string name;
  size_t trained_elements;  // leading rows x row size
};

// Trains a few steps with only the leading rows of `weights` selected and checks that every
// element past them is bit-identical to its initial value while the leading rows moved.
void check_frozen_rows_stay(Recipe recipe, const std::vector<PartialWeight>& weights, const std::string& backend) {
  INFO("backend " << backend);
  const Graph g = cnn();
  auto c = compile_engine(g, recipe, {}, backend);
  INFO(c.status().to_string());
  REQUIRE(c.is_ok());
  Engine& e = c->engine;
  std::map<std::string, std::vector<float>> initial;
  for (const PartialWeight& w : weights) initial[w.name] = read_floats(e, w.name, true).value();
  for (uint32_t step = 0; step < 4; ++step) {
    REQUIRE(cnn_feed(10 + step)(e).is_ok());
    auto loss = e.train_step();
    INFO(loss.status().to_string());
    REQUIRE(loss.is_ok());
  }
  for (const PartialWeight& w : weights) {
    INFO(w.name);
    const std::vector<float> now = read_floats(e, w.name, true).value();
    const std::vector<float>& before = initial[w.name];
    REQUIRE(now.size() == before.size());
    REQUIRE(w.trained_elements < now.size());
    size_t moved = 0;
    for (size_t i = 0; i < w.trained_elements; ++i) moved += now[i] != before[i];
    CHECK(moved > w.trained_elements / 2);
    const size_t frozen_bytes = (now.size() - w.trained_elements) * sizeof(float);
    CHECK(std::memcmp(now.data() + w.trained_elements, before.data() + w.trained_elements, frozen_bytes) == 0);
  }
}

}  // namespace

TEST_CASE("frozen channels of a partially trained weight stay bit-identical", "[train][sparse]") {
  Recipe r = gradient_recipe({rule_channels("conv1.weight", 3), rule_ratio("fc.weight", 0.5)});
  r.optimizer.lr = 0.1;
  SECTION("SGD with momentum and weight decay") {
    r.optimizer.momentum = 0.9;
    r.optimizer.weight_decay = 0.01;
    for (const char* backend : {"ref", "cpu"}) {
      check_frozen_rows_stay(r, {{"conv1.weight", 3 * 8 * 9}, {"fc.weight", 2 * 16}}, backend);
    }
  }
  SECTION("AdamW with gradient accumulation and clipping") {
    r.optimizer.type = "adamw";
    r.optimizer.lr = 0.01;
    r.optimizer.weight_decay = 0.1;
    r.grad_accumulation = 2;
    r.clip_grad_norm = 0.5;
    for (const char* backend : {"ref", "cpu"}) {
      check_frozen_rows_stay(r, {{"conv1.weight", 3 * 8 * 9}, {"fc.weight", 2 * 16}}, backend);
    }
  }
}

TEST_CASE("one SGD step moves the trained rows by lr times the full gradient's rows", "[train][sparse]") {
  const Graph g = cnn();
  const auto full = gradients(g, {}, {"conv1.weight"}, cnn_feed(20));
  Recipe r = gradient_recipe({rule_channels("conv1.weight", 3)});
  r.optimizer.lr = 0.5;
  auto c = compile_engine(g, r, {}, "cpu");
  REQUIRE(c.is_ok());
  const std::vector<float> before = read_floats(c->engine, "conv1.weight", true).value();
  REQUIRE(cnn_feed(20)(c->engine).is_ok());
  REQUIRE(c->engine.train_step().is_ok());
  const std::vector<float> after = read_floats(c->engine, "conv1.weight", true).value();
  const size_t trained = 3 * 8 * 9;
  for (size_t i = 0; i < after.size(); ++i) {
    INFO("element " << i);
    const float expected = i < trained ? before[i] - 0.5f * full.at("conv1.weight")[i] : before[i];
    CHECK(after[i] == Approx(expected).epsilon(1e-5).margin(1e-7));
  }
}

namespace {

struct TrainOps {
  std::map<std::string, int> count;          // op type -> how many in the train function
  std::vector<Shape> output_shapes;          // of every op in the train function
  std::vector<std::string> tensors_read;     // names of the tensors its ops read
};

TrainOps inspect_train(const Graph& g, std::vector<TrainableRule> rules, CompileReport* report) {
  Recipe r = gradient_recipe(std::move(rules));
  auto blob = compile(g, &r, CompileOptions{}, report);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  BlobView view;
  REQUIRE(open_blob(blob->data(), blob->size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  TrainOps out;
  for (const FunctionSpec& f : spec->functions) {
    if (f.name != "train") continue;
    for (uint32_t index : f.ops) {
      const OpSpec& op = spec->ops[index];
      ++out.count[op.op];
      for (int32_t t : op.outputs) out.output_shapes.push_back(spec->tensors[t].shape);
      for (int32_t t : op.inputs) {
        if (t >= 0) out.tensors_read.push_back(spec->tensors[t].name);
      }
    }
  }
  return out;
}

int count(const TrainOps& ops, const std::string& op) {
  auto it = ops.count.find(op);
  return it == ops.count.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("the compiled bias-only scheme has no weight gradients and no input gradient below the first conv",
          "[train][sparse]") {
  const Graph g = cnn();
  CompileReport full_report, bias_report, last_report;
  const TrainOps full = inspect_train(g, {}, &full_report);
  const TrainOps bias = inspect_train(g, {rule_bias_only()}, &bias_report);
  const TrainOps last = inspect_train(g, {rule_layers("last:1")}, &last_report);
  const Shape image_shape{kCnnBatch, 3, 8, 8};
  auto produces = [&](const TrainOps& ops, const Shape& s) {
    return std::find(ops.output_shapes.begin(), ops.output_shapes.end(), s) != ops.output_shapes.end();
  };

  // Full backprop: three weight gradients; input gradients of conv1 and conv2 (none for the image).
  CHECK(count(full, "Conv2dGradWeight") == 3);
  CHECK(count(full, "Conv2dGradInput") == 2);
  CHECK(count(full, "LinearWeightGrad") == 1);

  // Bias-only: no weight gradient at all; the input-gradient chain reaches conv0's output (its
  // bias trains) but stops there: nothing of the image's shape is computed, the image is not read
  // by the backward pass, and conv0's bias gradient is the only one below conv1.
  CHECK(count(bias, "Conv2dGradWeight") == 0);
  CHECK(count(bias, "LinearWeightGrad") == 0);
  CHECK(count(bias, "Conv2dGradInput") == 2);
  CHECK(count(bias, "Conv2dGradBias") == 2);  // conv0, conv2
  CHECK_FALSE(produces(bias, image_shape));
  CHECK(std::count(bias.tensors_read.begin(), bias.tensors_read.end(), "image") == 1);  // conv0's forward only

  // Only the classifier trains: no conv or BatchNorm backward op at all.
  CHECK(count(last, "Conv2dGradInput") == 0);
  CHECK(count(last, "Conv2dGradWeight") == 0);
  CHECK(count(last, "Conv2dGradBias") == 0);
  CHECK(count(last, "BatchNormTrainGrad") == 0);
  CHECK(count(last, "BatchNormParamGrad") == 0);
  CHECK(count(last, "LinearWeightGrad") == 1);

  // Fewer saved activations as less trains.
  INFO("saved activations: full " << full_report.saved_activation_bytes << ", bias-only "
                                  << bias_report.saved_activation_bytes << ", last layer "
                                  << last_report.saved_activation_bytes);
  CHECK(bias_report.saved_activation_bytes < full_report.saved_activation_bytes);
  CHECK(last_report.saved_activation_bytes < bias_report.saved_activation_bytes);
}
