// The sparse-BP selection language of the recipe's `trainable` rules (docs/recipe.md): each rule
// kind selects exactly the parameter set worked out by hand from the test models' structure
// (tests/train/sparse_models.hpp), rules combine by union, a trained weight brings its bias, and
// every error names the rule and field.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "blob/reader.hpp"
#include "compiler/lowering/train_mode.hpp"
#include "compiler/lowering/trainable.hpp"
#include "compiler/sparse/name_glob.hpp"
#include "train/sparse_models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Parameter name -> trained leading rows (-1: all) of what `rules` select.
using Selection = std::map<std::string, int64_t>;

Result<Selection> select(Graph g, const std::vector<TrainableRule>& rules) {
  POCK_ASSIGN_OR_RETURN(const std::vector<TensorId> ids, select_trainable(g, rules, batchnorm_running_stats(g)));
  Selection out;
  for (TensorId id : ids) out[g.tensor(id).name] = g.tensor(id).channels;
  return out;
}

Selection full(std::initializer_list<const char*> names) {
  Selection s;
  for (const char* n : names) s[n] = -1;
  return s;
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

Selection selected(const Graph& g, std::vector<TrainableRule> rules) {
  auto s = select(g, rules);
  INFO(s.status().to_string());
  REQUIRE(s.is_ok());
  return s.value();
}

std::string error_of(const Graph& g, std::vector<TrainableRule> rules) {
  auto s = select(g, rules);
  REQUIRE_FALSE(s.is_ok());
  return s.status().message();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("name globs: wildcards, numeric ranges and alternatives", "[train][sparse]") {
  CHECK(name_glob_match("*.bias", "features.3.conv.bias"));
  CHECK_FALSE(name_glob_match("*.bias", "features.3.conv.weight"));
  CHECK(name_glob_match("layer?.weight", "layer4.weight"));
  CHECK_FALSE(name_glob_match("layer?.weight", "layer10.weight"));

  const char* range = "model.layers.{26-29}.self_attn.q_proj.weight";
  CHECK(name_glob_match(range, "model.layers.26.self_attn.q_proj.weight"));
  CHECK(name_glob_match(range, "model.layers.29.self_attn.q_proj.weight"));
  CHECK_FALSE(name_glob_match(range, "model.layers.25.self_attn.q_proj.weight"));
  CHECK_FALSE(name_glob_match(range, "model.layers.30.self_attn.q_proj.weight"));
  CHECK_FALSE(name_glob_match(range, "model.layers.2.self_attn.q_proj.weight"));
  CHECK_FALSE(name_glob_match(range, "model.layers.267.self_attn.q_proj.weight"));
  CHECK_FALSE(name_glob_match(range, "model.layers.027.self_attn.q_proj.weight"));  // not canonical
  CHECK(name_glob_match("blk.{0-11}.*", "blk.0.attn_q.weight"));
  CHECK(name_glob_match("blk.{0-11}.*", "blk.11.ffn_up.weight"));
  CHECK_FALSE(name_glob_match("blk.{0-11}.*", "blk.12.ffn_up.weight"));
  // A range followed by more digits must not stop early: 1 then "5" is not a match of {1-2}5.
  CHECK(name_glob_match("x{1-2}5", "x25"));
  CHECK_FALSE(name_glob_match("x{1-2}5", "x35"));

  CHECK(name_glob_match("*.{q,k,v}_proj.weight", "model.layers.3.self_attn.k_proj.weight"));
  CHECK_FALSE(name_glob_match("*.{q,k,v}_proj.weight", "model.layers.3.self_attn.o_proj.weight"));
  // Many stars over a long non-matching name stay fast (memoized backtracking).
  CHECK_FALSE(name_glob_match("*a*a*a*a*a*a*a*b", std::string(200, 'a')));

  CHECK(validate_name_glob("model.layers.{26-29}.*.{q,k}_proj.*").is_ok());
  CHECK(contains(validate_name_glob("a.{3-1}").message(), "empty range"));
  CHECK(contains(validate_name_glob("a.{3-4").message(), "no closing"));
  CHECK(contains(validate_name_glob("a.}").message(), "closes no"));
  CHECK(contains(validate_name_glob("a.{x,,y}").message(), "empty alternative"));
}

TEST_CASE("CNN: match, layers and bias_only select exactly the expected parameters", "[train][sparse]") {
  const Graph g = cnn();
  // No rules: every parameter but the BatchNorm running statistics.
  CHECK(selected(g, {}) == full({"conv0.weight", "conv0.bias", "bn0.weight", "bn0.bias", "conv1.weight", "bn1.weight",
                                  "bn1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias"}));
  // A glob with a range; conv2's weight brings conv2's bias (conv1 has none).
  CHECK(selected(g, {rule_match("conv{1-2}.weight")}) == full({"conv1.weight", "conv2.weight", "conv2.bias"}));
  // Layers: conv0, bn0, conv1, bn1, conv2, fc.
  CHECK(selected(g, {rule_layers("last:2")}) == full({"conv2.weight", "conv2.bias", "fc.weight", "fc.bias"}));
  CHECK(selected(g, {rule_layers("first:1")}) == full({"conv0.weight", "conv0.bias"}));
  CHECK(selected(g, {rule_layers("1:4")}) ==
        full({"bn0.weight", "bn0.bias", "conv1.weight", "bn1.weight", "bn1.bias"}));
  // bias_only: Conv2d / Linear biases and *.bias (BatchNorm shifts); never a running statistic.
  CHECK(selected(g, {rule_bias_only()}) == full({"conv0.bias", "bn0.bias", "bn1.bias", "conv2.bias", "fc.bias"}));
  CHECK(selected(g, {rule_layers("last:3", true)}) == full({"bn1.bias", "conv2.bias", "fc.bias"}));
  TrainableRule bn_biases = rule_match("bn*");
  bn_biases.bias_only = true;
  CHECK(selected(g, {bn_biases}) == full({"bn0.bias", "bn1.bias"}));
  // Union.
  CHECK(selected(g, {rule_bias_only(), rule_match("fc.*")}) ==
        full({"conv0.bias", "bn0.bias", "bn1.bias", "conv2.bias", "fc.weight", "fc.bias"}));
  // A match that names running statistics selects nothing trainable from them.
  CHECK(contains(error_of(g, {rule_match("*.running_*")}), "trainable[0].match"));
}

TEST_CASE("bias_only finds normalization shifts by structure, whatever exporters name them", "[train][sparse]") {
  // tf2onnx and GGUF name BatchNorm/LayerNorm shifts after the framework ("..._beta", "ln_b"),
  // not "*.bias": bias_only must still select them (and never the running statistics or scales).
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 4, 3, 3});
  const TensorId h = b.batch_norm(x, b.parameter_uniform("BatchNorm_gamma", {4}, 0.5, 1),
                                  b.parameter_uniform("BatchNorm_beta", {4}, 0.5, 2),
                                  b.parameter("moving_mean", {4}, std::vector<float>(4, 0.0f)),
                                  b.parameter("moving_variance", {4}, std::vector<float>(4, 1.0f)));
  TensorId t = b.flatten(b.global_avg_pool(h));
  t = b.layer_norm(t, b.parameter_uniform("ln_g", {4}, 0.5, 3), b.parameter_uniform("ln_b", {4}, 0.5, 4));
  b.output(b.linear(t, b.parameter_uniform("dense_kernel", {2, 4}, 0.5, 5), b.parameter_uniform("dense_b", {2}, 0.5, 6)),
           "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  CHECK(selected(g.value(), {rule_bias_only()}) == full({"BatchNorm_beta", "ln_b", "dense_b"}));
}

TEST_CASE("CNN: partial channels count leading output channels of the selected weights", "[train][sparse]") {
  const Graph g = cnn();
  // The weight trains its first 4 of 16 channels, its bias in full (a trained weight's bias trains).
  CHECK(selected(g, {rule_ratio("conv2.weight", 0.25)}) == Selection{{"conv2.weight", 4}, {"conv2.bias", -1}});
  // ceil(0.3 * 16) = 5 rows; ceil(0.3 * 4) = 2; a fraction of 1 is the full weight.
  CHECK(selected(g, {rule_ratio("conv{1-2}.weight", 0.3)}) ==
        Selection{{"conv1.weight", 5}, {"conv2.weight", 5}, {"conv2.bias", -1}});
  CHECK(selected(g, {rule_ratio("fc.weight", 0.3)}) == Selection{{"fc.weight", 2}, {"fc.bias", -1}});
  CHECK(selected(g, {rule_ratio("fc.weight", 1.0)}) == full({"fc.weight", "fc.bias"}));
  // channels on a layers rule limits its weights; 1-D parameters (biases, BN scales) train in full.
  TrainableRule last2 = rule_layers("last:2");
  last2.channels = 3;
  CHECK(selected(g, {last2}) == Selection{{"conv2.weight", 3}, {"conv2.bias", -1}, {"fc.weight", 3}, {"fc.bias", -1}});
  // The paper's CNN scheme: every bias, and the last blocks' weights at a fraction of channels.
  TrainableRule late = rule_layers("2:5");
  late.channel_ratio = 0.5;
  late.match = "*.weight";
  CHECK(selected(g, {rule_bias_only(), late}) ==
        Selection{{"conv0.bias", -1}, {"bn0.bias", -1}, {"conv1.weight", 8}, {"bn1.weight", -1}, {"bn1.bias", -1},
                  {"conv2.weight", 8}, {"conv2.bias", -1}, {"fc.bias", -1}});
  // Union of overlapping rules: the larger row count wins, a full selection wins over any.
  CHECK(selected(g, {rule_channels("conv1.weight", 2), rule_channels("conv1.weight", 5)}) ==
        Selection{{"conv1.weight", 5}});
  CHECK(selected(g, {rule_channels("conv1.weight", 2), rule_match("conv1.*")}) == full({"conv1.weight"}));
}

TEST_CASE("transformer: QKV and first FFN linear of the last blocks", "[train][sparse]") {
  const Graph g = transformer();
  const std::vector<TrainableRule> scheme{rule_match("model.layers.{1-1}.self_attn.{q,k,v}_proj.weight"),
                                          rule_match("model.layers.{1-1}.mlp.fc1.weight")};
  CHECK(selected(g, scheme) == full({"model.layers.1.self_attn.q_proj.weight", "model.layers.1.self_attn.q_proj.bias",
                                     "model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.k_proj.bias",
                                     "model.layers.1.self_attn.v_proj.weight", "model.layers.1.self_attn.v_proj.bias",
                                     "model.layers.1.mlp.fc1.weight", "model.layers.1.mlp.fc1.bias"}));
  // Layers count embed_tokens, 8 per block, lm_head; attention's activation-only MatMuls are none.
  CHECK(selected(g, {rule_layers("last:1")}) == full({"lm_head.weight"}));
  CHECK(selected(g, {rule_layers("0:1")}) == full({"model.embed_tokens.weight"}));
  CHECK(selected(g, {rule_layers("16:17")}) == full({"model.layers.1.mlp.fc2.weight", "model.layers.1.mlp.fc2.b"}));
  CHECK(contains(error_of(g, {rule_layers("last:19")}), "the model has 18 layers"));
  // fc2's bias is an Add after its MatMul: found by structure for bias_only and for the bias rule.
  CHECK(selected(g, {rule_match("*.fc2.weight")}) ==
        full({"model.layers.0.mlp.fc2.weight", "model.layers.0.mlp.fc2.b", "model.layers.1.mlp.fc2.weight",
              "model.layers.1.mlp.fc2.b"}));
  const Selection biases = selected(g, {rule_layers("9:17", true)});  // block 1
  CHECK(biases == full({"model.layers.1.input_layernorm.bias", "model.layers.1.self_attn.q_proj.bias",
                        "model.layers.1.self_attn.k_proj.bias", "model.layers.1.self_attn.v_proj.bias",
                        "model.layers.1.post_attention_layernorm.bias", "model.layers.1.mlp.fc1.bias",
                        "model.layers.1.mlp.fc2.b"}));
  // Partial channels of the [N, K] projections and the [K, N] fc2 weight: leading stored rows.
  CHECK(selected(g, {rule_channels("*.1.self_attn.q_proj.weight", 3), rule_channels("*.1.mlp.fc2.weight", 5)}) ==
        Selection{{"model.layers.1.self_attn.q_proj.weight", 3}, {"model.layers.1.self_attn.q_proj.bias", -1},
                  {"model.layers.1.mlp.fc2.weight", 5}, {"model.layers.1.mlp.fc2.b", -1}});
}

TEST_CASE("selection errors name the rule and the field", "[train][sparse]") {
  const Graph g = cnn();
  std::string e = error_of(g, {rule_bias_only(), rule_match("encoder.*")});
  CHECK(contains(e, "trainable[1].match"));
  CHECK(contains(e, "'encoder.*'"));
  CHECK(contains(error_of(g, {rule_match("conv{3-1}.*")}), "trainable[0].match"));
  for (const char* bad : {"last:0", "last:7", "first:x", "3", "4:2", "2:9", "-1:2"}) {
    INFO(bad);
    CHECK(contains(error_of(g, {rule_layers(bad)}), "trainable[0].layers"));
  }
  TrainableRule disjoint = rule_layers("first:1");
  disjoint.match = "fc.*";
  CHECK(contains(error_of(g, {disjoint}), "trainable[0].layers"));
  TrainableRule weights_only = rule_match("*.weight");
  weights_only.bias_only = true;
  e = error_of(g, {weights_only});
  CHECK(contains(e, "trainable[0].bias_only"));
  TrainableRule bias_channels = rule_match("*.bias");
  bias_channels.channels = 2;
  CHECK(contains(error_of(g, {bias_channels}), "trainable[0].channels"));
  e = error_of(g, {rule_channels("fc.weight", 5)});
  CHECK(contains(e, "trainable[0].channels"));
  CHECK(contains(e, "'fc.weight'"));
  TrainableRule both = rule_channels("fc.weight", 2);
  both.channel_ratio = 0.5;
  CHECK(contains(error_of(g, {both}), "trainable[0].channels"));
  CHECK(contains(error_of(g, {TrainableRule{}}), "trainable[0]"));
}

TEST_CASE("the blob records partial channels and sizes optimizer state to them", "[train][sparse]") {
  Recipe r = gradient_recipe({rule_channels("conv1.weight", 3), rule_ratio("fc.weight", 0.5)});
  r.optimizer.type = "adam";
  auto blob = compile(cnn(), &r);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  BlobView view;
  REQUIRE(open_blob(blob->data(), blob->size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  std::map<std::string, TensorSpec> by_name;
  for (const TensorSpec& t : spec->tensors) by_name[t.name] = t;
  CHECK(by_name.at("conv1.weight").trainable);
  CHECK(by_name.at("conv1.weight").channels == 3);
  CHECK(by_name.at("conv1.weight").shape == Shape{16, 8, 3, 3});
  CHECK(by_name.at("conv1.weight.exp_avg").shape == Shape{3, 8, 3, 3});
  CHECK(by_name.at("conv1.weight.exp_avg_sq").shape == Shape{3, 8, 3, 3});
  CHECK(by_name.at("fc.weight").channels == 2);
  CHECK(by_name.at("fc.weight.exp_avg").shape == Shape{2, 16});
  CHECK(by_name.at("fc.bias").channels == -1);
  CHECK(by_name.at("fc.bias.exp_avg").shape == Shape{kCnnClasses});
  CHECK_FALSE(by_name.at("conv0.weight").trainable);
  CHECK(by_name.count("conv0.weight.exp_avg") == 0);
}
