// The paper's language-model recipes as shipped in examples/recipes/, compiled for a small LLaMA
// (6 blocks): each trains exactly the parameters its scheme names, worked out here from the
// model's structure, and its train step runs. Also what `trainable[].blocks` selects (whole
// decoder blocks) next to `layers` (Linear/norm/embedding nodes, which do not add up to blocks).
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "blob/reader.hpp"
#include "compiler/lowering/train_mode.hpp"
#include "compiler/lowering/trainable.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/models.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

models::LlamaConfig six_blocks() {
  models::LlamaConfig c;
  c.batch = 2, c.seq_len = 5, c.vocab_size = 20, c.hidden_size = 16, c.num_layers = 6, c.num_heads = 4;
  c.num_kv_heads = 2, c.intermediate_size = 24, c.initializer_range = 0.2, c.seed = 3;
  return c;
}

const char* const kBlockParts[] = {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                   "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
                                   "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"};

// "model.layers.<b>.<part>" for b in [first, 6) and each part.
std::set<std::string> in_blocks(int first, std::initializer_list<const char*> parts) {
  std::set<std::string> names;
  for (int b = first; b < 6; ++b) {
    for (const char* p : parts) names.insert("model.layers." + std::to_string(b) + "." + p);
  }
  return names;
}

std::set<std::string> whole_blocks(int first) {
  std::set<std::string> names;
  for (const char* p : kBlockParts) names.merge(in_blocks(first, {p}));
  return names;
}

std::set<std::string> selected(Graph g, const std::vector<TrainableRule>& rules) {
  auto ids = select_trainable(g, rules, batchnorm_running_stats(g));
  INFO(ids.status().to_string());
  REQUIRE(ids.is_ok());
  std::set<std::string> names;
  for (TensorId id : ids.value()) names.insert(g.tensor(id).name);
  return names;
}

TrainableRule rule(const char* key, const char* value) {
  TrainableRule r;
  (std::string(key) == "blocks" ? r.blocks : std::string(key) == "layers" ? r.layers : r.match) = value;
  return r;
}

// The recipe file compiled for the model; returns the names of the parameters that train.
std::set<std::string> compile_and_train(const std::string& file) {
  auto recipe = load_recipe(std::string(POCK_TESTS_DIR) + "/../examples/recipes/" + file);
  INFO(file << ": " << recipe.status().to_string());
  REQUIRE(recipe.is_ok());
  const models::LlamaConfig c = six_blocks();
  auto blob = compile(models::llama_causal_lm(c).value(), &recipe.value());
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  BlobView view;
  REQUIRE(open_blob(blob->data(), blob->size(), VerifyOptions{}, &view).is_ok());
  const ProgramSpec spec = read_program_spec(view, false).value();
  std::set<std::string> trained;
  for (const TensorSpec& t : spec.tensors) {
    if (t.trainable) trained.insert(t.name);
  }
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  std::vector<int64_t> ids(size_t(c.batch * c.seq_len)), labels(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t(i * 7 % 20), labels[i] = int64_t(i * 3 % 20);
  for (int step = 0; step < 2; ++step) {
    REQUIRE(engine->set_input("input_ids", ids).is_ok());
    REQUIRE(engine->set_input("label", labels).is_ok());
    auto loss = engine->train_step();
    INFO(loss.status().to_string());
    REQUIRE(loss.is_ok());
    CHECK(std::isfinite(loss.value()));
  }
  return trained;
}

}  // namespace

TEST_CASE("trainable blocks: whole decoder blocks by number; layers counts nodes, not blocks", "[compiler][recipe]") {
  const Graph g = models::llama_causal_lm(six_blocks()).value();
  CHECK(selected(g, {rule("blocks", "last:2")}) == whole_blocks(4));
  const std::set<std::string> first = selected(g, {rule("blocks", "first:1")});
  CHECK(first.size() == 9);
  CHECK(first.count("model.layers.0.mlp.down_proj.weight") == 1);
  CHECK(selected(g, {rule("blocks", "0:1")}) == first);
  TrainableRule qkv = rule("blocks", "last:1");
  qkv.match = "*.{q,k,v}_proj.weight";
  CHECK(selected(g, {qkv}) == in_blocks(5, {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"}));
  // `layers` counts every Linear/norm/embedding node in forward order: its last 4 are block 5's
  // up and down projections, the final norm and the (tied) LM head — not block 5 whole.
  const std::set<std::string> last_layers = selected(g, {rule("layers", "last:4")});
  CHECK(last_layers != whole_blocks(5));
  CHECK(last_layers.count("model.norm.weight") == 1);
  CHECK(last_layers.count("model.layers.5.self_attn.q_proj.weight") == 0);

  Graph copy = g;
  auto error = select_trainable(copy, {rule("blocks", "last:7")}, {});
  CHECK_THAT(error.status().message(), Catch::Contains("trainable[0].blocks") && Catch::Contains("6 blocks"));
  TrainableRule none = rule("blocks", "last:1");
  none.match = "model.norm.weight";
  CHECK_THAT(select_trainable(copy, {none}, {}).status().message(), Catch::Contains("trainable[0].blocks"));
  CHECK_THAT(parse_recipe(R"({"trainable": [{"blocks": 4}]})").status().message(), Catch::Contains("trainable[0].blocks"));
}

TEST_CASE("examples/recipes: the paper's LLM schemes train what they say", "[compiler][recipe]") {
  SECTION("last k blocks: every parameter of the last 4 blocks") {
    CHECK(compile_and_train("llama_last_blocks.json") == whole_blocks(2));
  }
  SECTION("sparse: q/k/v projections and the first FFN layer (gate, up) of the last 4 blocks") {
    CHECK(compile_and_train("llama_sparse.json") ==
          in_blocks(2, {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight", "mlp.gate_proj.weight",
                        "mlp.up_proj.weight"}));
  }
  SECTION("LoRA on the attention projections of every block: only the adapters") {
    std::set<std::string> want;
    for (int b = 0; b < 6; ++b) {
      for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
        for (const char* ab : {"lora_A", "lora_B"}) want.insert("model.layers." + std::to_string(b) + ".self_attn." + p + "." + ab + ".weight");
      }
    }
    CHECK(compile_and_train("llama_lora.json") == want);
  }
  SECTION("LoRA on q/v of the last 4 blocks") {
    std::set<std::string> want;
    for (int b = 2; b < 6; ++b) {
      for (const char* p : {"q_proj", "v_proj"}) {
        for (const char* ab : {"lora_A", "lora_B"}) want.insert("model.layers." + std::to_string(b) + ".self_attn." + p + "." + ab + ".weight");
      }
    }
    CHECK(compile_and_train("llama_lora_last_blocks.json") == want);
  }
}
