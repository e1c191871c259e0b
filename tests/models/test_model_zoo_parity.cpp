// Forward parity of the model zoo with PyTorch: make_reference.py builds each architecture in
// PyTorch (torchvision's MobileNetV2 / ResNet; BERT and LLaMA modules after transformers), draws
// weights and an input, and computes the eval-mode logits in float64. Here the zoo model of the
// same configuration loads that state_dict by name -- every PyTorch tensor must find its
// parameter and every parameter its tensor -- and its inference output must agree to 1e-4 of the
// output's scale.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/expect_close.hpp"
#include "zoo_reference.hpp"

using namespace pock;
using nlohmann::json;

namespace {

// Tiny configurations that still contain every block type: MobileNetV2 with and without
// expansion and with residual blocks; ResNet-18 at torchvision's fixed width on a small image;
// BERT with padding mask and segments; LLaMA with grouped-query attention and its own lm_head.
models::MobileNetV2Config tiny_mobilenet() {
  models::MobileNetV2Config c;
  c.batch = 2, c.resolution = 32, c.num_classes = 10, c.width_mult = 0.5;
  c.stages = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 2, 2}};
  return c;
}
models::ResNetConfig tiny_resnet() {
  models::ResNetConfig c;
  c.batch = 2, c.resolution = 32, c.num_classes = 10;
  return c;
}
models::BertConfig tiny_bert() {
  models::BertConfig c;
  c.batch = 2, c.seq_len = 8, c.vocab_size = 50, c.hidden_size = 32, c.num_layers = 2, c.num_heads = 4;
  c.intermediate_size = 64, c.max_position_embeddings = 16, c.num_labels = 3;
  c.attention_mask = true, c.token_type_ids = true;
  return c;
}
models::LlamaConfig tiny_llama() {
  models::LlamaConfig c;
  c.batch = 2, c.seq_len = 8, c.vocab_size = 64, c.hidden_size = 32, c.num_layers = 2, c.num_heads = 4;
  c.num_kv_heads = 2, c.intermediate_size = 48, c.rope_theta = 500.0, c.tie_word_embeddings = false;
  return c;
}

json reference_spec() {
  const auto m = tiny_mobilenet();
  json stages = json::array();
  for (const auto& s : m.stages) stages.push_back({s.expand_ratio, s.channels, s.blocks, s.stride});
  const auto r = tiny_resnet();
  const auto b = tiny_bert();
  const auto l = tiny_llama();
  return {
      {"mobilenet_v2",
       {{"batch", m.batch},
        {"resolution", m.resolution},
        {"num_classes", m.num_classes},
        {"width_mult", m.width_mult},
        {"round_nearest", m.round_nearest},
        {"dropout", m.dropout},
        {"stages", stages}}},
      {"resnet18",
       {{"batch", r.batch},
        {"resolution", r.resolution},
        {"num_classes", r.num_classes},
        {"width", r.width},
        {"blocks", r.blocks}}},
      {"bert",
       {{"batch", b.batch},
        {"seq_len", b.seq_len},
        {"vocab_size", b.vocab_size},
        {"hidden_size", b.hidden_size},
        {"num_layers", b.num_layers},
        {"num_heads", b.num_heads},
        {"intermediate_size", b.intermediate_size},
        {"max_position_embeddings", b.max_position_embeddings},
        {"type_vocab_size", b.type_vocab_size},
        {"layer_norm_eps", b.layer_norm_eps},
        {"num_labels", b.num_labels},
        {"attention_mask", b.attention_mask},
        {"token_type_ids", b.token_type_ids}}},
      {"llama",
       {{"batch", l.batch},
        {"seq_len", l.seq_len},
        {"vocab_size", l.vocab_size},
        {"hidden_size", l.hidden_size},
        {"num_layers", l.num_layers},
        {"num_heads", l.num_heads},
        {"num_kv_heads", l.num_kv_heads},
        {"intermediate_size", l.intermediate_size},
        {"rms_norm_eps", l.rms_norm_eps},
        {"rope_theta", l.rope_theta},
        {"tie_word_embeddings", l.tie_word_embeddings}}},
  };
}

// Removes the temporary reference directory when the process ends.
struct DirectoryCleanup {
  std::filesystem::path dir;
  ~DirectoryCleanup() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

// PyTorch runs once per process: every SECTION below re-enters the test case and reuses it.
const test::ReferenceRun& references() {
  static const test::ReferenceRun run = test::run_reference_script(reference_spec());
  static const DirectoryCleanup cleanup{run.dir};
  return run;
}

// Loads `model`'s reference weights into `graph`, runs inference on the reference inputs and
// compares the logits with PyTorch's.
void check_parity(Graph graph, const std::string& model) {
  const auto& run = references();
  const auto weights = test::read_ref_tensors(run.dir / (model + ".weights.bin"));
  const auto io = test::read_ref_tensors(run.dir / (model + ".io.bin"));
  INFO(weights.status().to_string() << " " << io.status().to_string());
  REQUIRE((weights.is_ok() && io.is_ok()));
  const Status loaded = models::load_weights(graph, test::to_weight_map(weights.value()), {.require_all = true});
  INFO(loaded.to_string());
  REQUIRE(loaded.is_ok());

  auto blob = compile(graph, nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  for (const auto& [name, t] : io.value()) {
    if (name == "logits") continue;
    const Status fed = engine->set_input(name, t.bytes.data(), t.bytes.size());
    INFO(name << ": " << fed.to_string());
    REQUIRE(fed.is_ok());
  }
  REQUIRE(engine->infer().is_ok());
  auto logits = engine->output<float>("logits");
  REQUIRE(logits.is_ok());

  const std::vector<double> want = io->at("logits").as<double>();
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  REQUIRE(scale > 0);
  CHECK(test::mismatches(logits.value(), want, 1e-4, 1e-4 * scale) == "");
}

}  // namespace

TEST_CASE("zoo models match PyTorch's forward pass", "[models][parity]") {
  const auto& run = references();
  if (run.skipped) {
    WARN("skipped: /usr/bin/python3 lacks torch or torchvision");
    return;
  }
  INFO(run.error);
  REQUIRE(run.error.empty());

  SECTION("MobileNetV2 (torchvision)") {
    auto graph = models::mobilenet_v2(tiny_mobilenet());
    REQUIRE(graph.is_ok());
    check_parity(std::move(graph.value()), "mobilenet_v2");
  }
  SECTION("ResNet-18 (torchvision)") {
    auto graph = models::resnet18(tiny_resnet());
    REQUIRE(graph.is_ok());
    check_parity(std::move(graph.value()), "resnet18");
  }
  SECTION("BERT encoder with classifier, mask and segments") {
    auto graph = models::bert_classifier(tiny_bert());
    REQUIRE(graph.is_ok());
    check_parity(std::move(graph.value()), "bert");
  }
  SECTION("LLaMA decoder with grouped-query attention") {
    auto graph = models::llama_causal_lm(tiny_llama());
    REQUIRE(graph.is_ok());
    check_parity(std::move(graph.value()), "llama");
  }
}
