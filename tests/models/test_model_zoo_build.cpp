// The zoo's presets have the published architectures (parameter counts as torchvision and the
// Hugging Face model cards report them, PyTorch's state_dict names), initial weights follow the
// sources' initializations, configs are validated, and load_weights replaces values by name.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "pock/compiler/compiler.hpp"
#include "pock/compiler/models.hpp"

using namespace pock;

namespace {

int64_t parameter_count(const Graph& g) {
  int64_t n = 0;
  for (const TensorDesc& t : g.tensors()) n += t.kind == TensorKind::kParameter ? numel(t.shape) : 0;
  return n;
}

std::vector<float> values_of(const Graph& g, const std::string& name) {
  const TensorId id = g.find(name);
  if (id == kNoTensor || !g.tensor(id).data) return {};
  const auto& bytes = *g.tensor(id).data;
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

double mean_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

double std_of(const std::vector<float>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

Shape shape_of(const Graph& g, const std::string& name) {
  const TensorId id = g.find(name);
  return id == kNoTensor ? Shape{} : g.tensor(id).shape;
}

models::LlamaConfig tiny_llama() {
  models::LlamaConfig c;
  c.batch = 2, c.seq_len = 4, c.vocab_size = 16, c.hidden_size = 8, c.num_layers = 1, c.num_heads = 2;
  c.num_kv_heads = 1, c.intermediate_size = 12;
  return c;
}

}  // namespace

TEST_CASE("The presets have the published architectures", "[models]") {
  SECTION("MobileNetV2 1.0 at 128x128, batch 8") {
    auto g = models::mobilenet_v2(models::mobilenet_v2_config());
    REQUIRE(g.is_ok());
    CHECK(parameter_count(g.value()) == 3504872);  // torchvision.models.mobilenet_v2()
    CHECK(shape_of(g.value(), "image") == Shape{8, 3, 128, 128});
    CHECK(shape_of(g.value(), "features.18.0.weight") == Shape{1280, 320, 1, 1});
    CHECK(shape_of(g.value(), "features.1.conv.0.0.weight") == Shape{32, 1, 3, 3});  // t = 1: no expansion
    CHECK(shape_of(g.value(), "features.2.conv.0.0.weight") == Shape{96, 16, 1, 1});
    CHECK(shape_of(g.value(), "features.17.conv.3.running_var") == Shape{320});
    CHECK(shape_of(g.value(), "classifier.1.weight") == Shape{1000, 1280});
  }
  SECTION("ResNet-18") {
    auto g = models::resnet18(models::resnet18_config());
    REQUIRE(g.is_ok());
    CHECK(parameter_count(g.value()) == 11689512);  // torchvision.models.resnet18()
    CHECK(shape_of(g.value(), "layer2.0.downsample.0.weight") == Shape{128, 64, 1, 1});
    CHECK(shape_of(g.value(), "layer1.0.downsample.0.weight").empty());
    CHECK(shape_of(g.value(), "fc.weight") == Shape{1000, 512});
  }
  SECTION("MiniLM-L6 encoder with a 2-label head") {
    auto g = models::bert_classifier(models::minilm_l6_config());
    REQUIRE(g.is_ok());
    // all-MiniLM-L6-v2's BertModel has 22,713,216 parameters; the classifier adds 384 * 2 + 2.
    CHECK(parameter_count(g.value()) == 22713216 + 770);
    CHECK(shape_of(g.value(), "encoder.layer.5.attention.self.query.weight") == Shape{384, 384});
    CHECK(shape_of(g.value(), "encoder.layer.5.output.LayerNorm.bias") == Shape{384});
    CHECK(shape_of(g.value(), "input_ids") == Shape{8, 128});
  }
  SECTION("SmolLM2-135M, tied") {
    auto g = models::llama_causal_lm(models::smollm2_135m_config());
    REQUIRE(g.is_ok());
    CHECK(parameter_count(g.value()) == 134515008);  // SmolLM2-135M's num_parameters()
    CHECK(shape_of(g.value(), "model.layers.29.self_attn.k_proj.weight") == Shape{192, 576});
    CHECK(shape_of(g.value(), "model.layers.29.mlp.down_proj.weight") == Shape{576, 1536});
    CHECK(shape_of(g.value(), "lm_head.weight").empty());
    CHECK(shape_of(g.value(), "logits") == Shape{1, 256, 49152});
  }
}

TEST_CASE("Initial weights follow the sources' initializations", "[models]") {
  models::MobileNetV2Config m;
  m.batch = 1, m.resolution = 32, m.stages = {{1, 16, 1, 1}};
  auto mobilenet = models::mobilenet_v2(m);
  REQUIRE(mobilenet.is_ok());
  // torchvision: kaiming_normal_(mode="fan_out"): std sqrt(2 / (1280 * 1 * 1)) for the last conv.
  const auto last_conv = values_of(mobilenet.value(), "features.2.0.weight");
  CHECK(std::fabs(mean_of(last_conv)) < 0.05 * std::sqrt(2.0 / 1280));
  CHECK(std_of(last_conv) == Approx(std::sqrt(2.0 / 1280)).epsilon(0.03));
  CHECK(std_of(values_of(mobilenet.value(), "classifier.1.weight")) == Approx(0.01).epsilon(0.03));
  CHECK(values_of(mobilenet.value(), "features.2.1.running_var") == std::vector<float>(1280, 1.0f));

  models::BertConfig b;
  b.batch = 1, b.seq_len = 4, b.vocab_size = 100, b.num_layers = 1;
  auto bert = models::bert_classifier(b);
  REQUIRE(bert.is_ok());
  const auto words = values_of(bert.value(), "embeddings.word_embeddings.weight");
  CHECK(std_of(words) == Approx(0.02).epsilon(0.03));
  CHECK(std::vector<float>(words.begin(), words.begin() + 384) == std::vector<float>(384, 0.0f));  // pad row
  CHECK(values_of(bert.value(), "encoder.layer.0.intermediate.dense.bias") == std::vector<float>(1536, 0.0f));

  // Same seed, same weights; another seed, other weights.
  auto again = models::bert_classifier(b);
  b.seed = 1;
  auto reseeded = models::bert_classifier(b);
  REQUIRE((again.is_ok() && reseeded.is_ok()));
  CHECK(values_of(again.value(), "classifier.weight") == values_of(bert.value(), "classifier.weight"));
  CHECK(values_of(reseeded.value(), "classifier.weight") != values_of(bert.value(), "classifier.weight"));
}

TEST_CASE("Invalid configurations are errors naming the problem", "[models]") {
  auto llama = tiny_llama();
  llama.num_kv_heads = 3;
  auto g = models::llama_causal_lm(llama);
  REQUIRE_FALSE(g.is_ok());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK_THAT(g.status().message(), Catch::Contains("num_kv_heads"));

  models::BertConfig bert;
  bert.seq_len = 1024;
  CHECK_THAT(models::bert_classifier(bert).status().message(), Catch::Contains("max_position_embeddings"));
  bert = {};
  bert.num_heads = 5;
  CHECK_THAT(models::bert_classifier(bert).status().message(), Catch::Contains("num_heads"));

  models::MobileNetV2Config mobilenet;
  mobilenet.stages = {{6, 24, 2, 3}};
  CHECK(models::mobilenet_v2(mobilenet).status().code() == Code::kInvalidArgument);
  models::ResNetConfig resnet;
  resnet.blocks = {2, 0, 2, 2};
  CHECK(models::resnet18(resnet).status().code() == Code::kInvalidArgument);
}

TEST_CASE("load_weights replaces values by name and rejects what does not fit", "[models]") {
  auto built = models::llama_causal_lm(tiny_llama());
  REQUIRE(built.is_ok());
  Graph& g = built.value();
  const auto before = values_of(g, "model.norm.weight");

  SECTION("a matching map replaces the values") {
    const std::vector<float> norm = {1, 2, 3, 4, 5, 6, 7, 8};
    REQUIRE(models::load_weights(g, {{"model.norm.weight", norm}}).is_ok());
    CHECK(values_of(g, "model.norm.weight") == norm);
  }
  SECTION("an unknown name fails and changes nothing") {
    const models::WeightMap map = {{"model.norm.weight", std::vector<float>(8, 2.0f)},
                                   {"model.layers.7.mlp.up_proj.weight", std::vector<float>(96, 0.0f)}};
    const Status s = models::load_weights(g, map);
    CHECK(s.code() == Code::kNotFound);
    CHECK_THAT(s.message(), Catch::Contains("model.layers.7.mlp.up_proj.weight"));
    CHECK(values_of(g, "model.norm.weight") == before);
  }
  SECTION("a wrong value count fails") {
    const Status s = models::load_weights(g, {{"model.norm.weight", std::vector<float>(7, 1.0f)}});
    CHECK(s.code() == Code::kShapeMismatch);
    CHECK_THAT(s.message(), Catch::Contains("model.norm.weight"));
  }
  SECTION("require_all reports the first parameter without a value") {
    const Status s = models::load_weights(g, {{"model.norm.weight", before}}, {.require_all = true});
    CHECK(s.code() == Code::kNotFound);
  }
  SECTION("PyTorch's BatchNorm counters are ignored, running statistics load") {
    models::ResNetConfig c;
    c.batch = 1, c.resolution = 16, c.width = 4, c.blocks = {1, 1, 1, 1};
    auto resnet = models::resnet18(c);
    REQUIRE(resnet.is_ok());
    const models::WeightMap map = {{"bn1.num_batches_tracked", {7.0f}}, {"bn1.running_var", {2, 2, 2, 2}}};
    REQUIRE(models::load_weights(resnet.value(), map).is_ok());
    CHECK(values_of(resnet.value(), "bn1.running_var") == std::vector<float>{2, 2, 2, 2});
  }
}

TEST_CASE("A recipe may change the batch size of every zoo model", "[models]") {
  // Reshapes keep the batch dimension symbolic (0 = copy), so batch_size rewrites all of them.
  Recipe recipe;
  recipe.batch_size = 3;
  models::MobileNetV2Config m;
  m.batch = 1, m.resolution = 16, m.num_classes = 4, m.width_mult = 0.25, m.stages = {{1, 8, 1, 1}};
  models::ResNetConfig r;
  r.batch = 1, r.resolution = 16, r.width = 4, r.num_classes = 4, r.blocks = {1, 1, 1, 1};
  models::BertConfig b;
  b.batch = 1, b.seq_len = 4, b.vocab_size = 10, b.hidden_size = 8, b.num_layers = 1, b.num_heads = 2;
  b.intermediate_size = 8, b.attention_mask = true;
  const std::vector<std::pair<const char*, Result<Graph>>> graphs = {{"mobilenet_v2", models::mobilenet_v2(m)},
                                                                     {"resnet18", models::resnet18(r)},
                                                                     {"bert", models::bert_classifier(b)},
                                                                     {"llama", models::llama_causal_lm(tiny_llama())}};
  for (const auto& [name, graph] : graphs) {
    INFO(name << ": " << graph.status().to_string());
    REQUIRE(graph.is_ok());
    auto blob = compile(graph.value(), &recipe);
    INFO(blob.status().to_string());
    CHECK(blob.is_ok());
  }
}
