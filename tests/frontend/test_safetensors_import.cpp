// import_hf_folder against transformers: tiny LlamaForCausalLM (sharded, with an index), BertModel
// and BertForSequenceClassification (float16, "bert." names) checkpoints that transformers saved
// with random weights (tests/frontend/safetensors/make_fixture.py), imported, compiled and run; the
// outputs must equal the ones transformers computed. Configurations the builders cannot express,
// checkpoints that do not match their configuration and hostile indexes are refused by name.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "frontend/safetensors_files.hpp"
#include "models/zoo_reference.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/safetensors.hpp"
#include "pock/engine.hpp"
#include "support/expect_close.hpp"
#include "support/file_bytes.hpp"

using namespace pock;
namespace fs = std::filesystem;

namespace {

// Compiles `graph` for inference, feeds the expected file's integer inputs, and compares every
// float tensor of the file with the output of that name (1e-4 of the output's scale).
void check_outputs(Result<Graph> graph, const std::string& expected_path) {
  INFO(graph.status().to_string());
  REQUIRE(graph.is_ok());
  auto expected = test::read_ref_tensors(expected_path);
  REQUIRE(expected.is_ok());
  auto blob = compile(graph.value(), nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  for (const auto& [name, t] : expected.value()) {
    if (t.dtype == 1) REQUIRE(engine->set_input(name, t.bytes.data(), t.bytes.size()).is_ok());
  }
  REQUIRE(engine->infer().is_ok());
  int compared = 0;
  for (const auto& [name, t] : expected.value()) {
    if (t.dtype != 0) continue;
    INFO("output " << name);
    auto got = engine->output<float>(name);
    REQUIRE(got.is_ok());
    const std::vector<float> want_f = t.as<float>();
    const std::vector<double> want(want_f.begin(), want_f.end());
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    REQUIRE(scale > 0);
    CHECK(test::mismatches(got.value(), want, 1e-4, 1e-4 * scale) == "");
    ++compared;
  }
  CHECK(compared > 0);
}

// A copy of a fixture folder in a fresh temporary one, with config.json (and other files) edited.
class EditedFolder {
 public:
  explicit EditedFolder(const std::string& fixture) : dir_(fs::temp_directory_path() / ("pock_st_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::copy(test::kSafetensorsDir + "/" + fixture, dir_);
  }
  ~EditedFolder() { fs::remove_all(dir_); }
  std::string path() const { return dir_.string(); }
  void edit_json(const std::string& file, const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json j;
    std::ifstream(dir_ / file) >> j;
    edit(j);
    std::ofstream(dir_ / file) << j.dump();
  }

 private:
  fs::path dir_;
};

Status import_edited_llama(const std::function<void(nlohmann::json&)>& edit) {
  EditedFolder folder("llama");
  folder.edit_json("config.json", edit);
  return import_hf_folder(folder.path(), {.batch = 2, .seq_len = 5}).status();
}

void check_error(const Status& s, Code code, const std::string& needle) {
  INFO(s.to_string());
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == code);
  CHECK(s.message().find(needle) != std::string::npos);
}

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> bytes = test::read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

TEST_CASE("hf import: a sharded LlamaForCausalLM gives transformers' logits", "[frontend][safetensors]") {
  const std::string dir = test::kSafetensorsDir + "/llama";
  check_outputs(import_hf_folder(dir, {.batch = 2, .seq_len = 5}), dir + "/expected.bin");
}

TEST_CASE("hf import: a BertModel gives transformers' last_hidden_state and pooler_output", "[frontend][safetensors]") {
  const std::string dir = test::kSafetensorsDir + "/bert";
  auto graph = import_hf_folder(dir, {.batch = 2, .seq_len = 6});
  REQUIRE(graph.is_ok());
  CHECK(graph->find("classifier.weight") == kNoTensor);
  check_outputs(std::move(graph), dir + "/expected.bin");
}

TEST_CASE("hf import: a float16 BertForSequenceClassification gives transformers' logits", "[frontend][safetensors]") {
  const std::string dir = test::kSafetensorsDir + "/bert_cls";
  HfImportOptions o{.batch = 2, .seq_len = 6, .attention_mask = true, .token_type_ids = true};
  check_outputs(import_hf_folder(dir, o), dir + "/expected.bin");
}

TEST_CASE("hf import: BERT heads by num_labels", "[frontend][safetensors]") {
  const std::string bert = test::kSafetensorsDir + "/bert", cls = test::kSafetensorsDir + "/bert_cls";
  SECTION("a fresh classifier on a BertModel, initialized as transformers does") {
    auto g = import_hf_folder(bert, {.batch = 2, .seq_len = 6, .num_labels = 4});
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    const TensorDesc& w = g->tensor(g->find("classifier.weight"));
    CHECK(w.shape == Shape{4, 8});
    CHECK(g->find("pooler_output") == kNoTensor);
    REQUIRE(compile(g.value(), nullptr).is_ok());
  }
  SECTION("the encoder alone from a classification checkpoint (its classifier left out)") {
    auto g = import_hf_folder(cls, {.batch = 1, .seq_len = 6, .num_labels = 0});
    INFO(g.status().to_string());
    REQUIRE(g.is_ok());
    CHECK(g->find("classifier.weight") == kNoTensor);
    CHECK(g->find("last_hidden_state") != kNoTensor);
  }
  SECTION("a label count other than the checkpoint's classifier is refused") {
    check_error(import_hf_folder(cls, {.num_labels = 2}).status(), Code::kShapeMismatch, "3 labels");
  }
}

TEST_CASE("hf import: configurations the builders cannot express are refused by name", "[frontend][safetensors][hostile]") {
  using J = nlohmann::json;
  check_error(import_edited_llama([](J& j) { j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}}; }),
              Code::kUnsupportedOp, "rope_scaling");
  check_error(import_edited_llama([](J& j) { j["attention_bias"] = true; }), Code::kUnsupportedOp, "attention_bias");
  check_error(import_edited_llama([](J& j) { j["mlp_bias"] = true; }), Code::kUnsupportedOp, "mlp_bias");
  check_error(import_edited_llama([](J& j) { j["hidden_act"] = "gelu"; }), Code::kUnsupportedOp, "hidden_act");
  check_error(import_edited_llama([](J& j) { j["head_dim"] = 8; }), Code::kUnsupportedOp, "head_dim");
  check_error(import_edited_llama([](J& j) { j["model_type"] = "gpt2"; }), Code::kUnsupportedOp, "gpt2");
  check_error(import_edited_llama([](J& j) { j["hidden_size"] = "8"; }), Code::kInvalidArgument, "hidden_size");
  check_error(import_edited_llama([](J& j) { j.erase("vocab_size"); }), Code::kInvalidArgument, "vocab_size");
  // rope_scaling / rope_parameters of the plain kind are fine (transformers 5 writes the latter).
  CHECK(import_edited_llama([](J& j) { j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500.0}}; }).is_ok());

  const std::string bert = read_text(test::kSafetensorsDir + "/bert/config.json");
  const std::vector<uint8_t> weights = test::read_file_bytes(test::kSafetensorsDir + "/bert/model.safetensors");
  auto import_bert = [&](const std::function<void(J&)>& edit) {
    J j = J::parse(bert);
    edit(j);
    return import_hf_bytes(j.dump(), weights.data(), weights.size(), {.seq_len = 6}).status();
  };
  CHECK(import_bert([](J&) {}).is_ok());
  check_error(import_bert([](J& j) { j["hidden_act"] = "gelu_new"; }), Code::kUnsupportedOp, "hidden_act");
  check_error(import_bert([](J& j) { j["position_embedding_type"] = "relative_key"; }), Code::kUnsupportedOp,
              "position_embedding_type");
  check_error(import_bert([](J& j) { j["is_decoder"] = true; }), Code::kUnsupportedOp, "is_decoder");
  check_error(import_edited_llama([](J& j) { j["num_hidden_layers"] = 1 << 20; }), Code::kInvalidArgument, "more tensors");
}

TEST_CASE("hf import: a checkpoint that does not match its configuration is refused before a graph is built",
          "[frontend][safetensors][hostile]") {
  using J = nlohmann::json;
  check_error(import_edited_llama([](J& j) { j["vocab_size"] = 17; }), Code::kShapeMismatch, "model.embed_tokens.weight");
  check_error(import_edited_llama([](J& j) { j["intermediate_size"] = 13; }), Code::kShapeMismatch, "mlp.gate_proj");
  check_error(import_edited_llama([](J& j) { j["num_key_value_heads"] = 2; }), Code::kShapeMismatch, "k_proj");
  check_error(import_edited_llama([](J& j) { j["num_hidden_layers"] = 1; }), Code::kUnsupportedOp, "model.layers.1.");
  // A tied head: the checkpoint's lm_head.weight is then ignored (as transformers does), not refused.
  CHECK(import_edited_llama([](J& j) { j["tie_word_embeddings"] = true; }).is_ok());

  const std::string config = read_text(test::kSafetensorsDir + "/bert/config.json");
  // The BERT fixture rebuilt from its own header (edited) and data.
  auto bert_with = [](const std::function<void(J&, std::vector<uint8_t>&)>& edit) {
    const std::vector<uint8_t> bytes = test::read_file_bytes(test::kSafetensorsDir + "/bert/model.safetensors");
    uint64_t header_size = 0;
    std::memcpy(&header_size, bytes.data(), 8);
    const auto data_begin = bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_size);
    J header = J::parse(bytes.begin() + 8, data_begin);
    std::vector<uint8_t> data(data_begin, bytes.end());
    edit(header, data);
    return test::safetensors_bytes(header.dump(), data);
  };
  SECTION("a tensor the configuration has no place for") {
    const std::vector<uint8_t> extra = bert_with([](J& header, std::vector<uint8_t>& data) {
      header["encoder.layer.0.attention.self.rotary.weight"] = {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {data.size(), data.size() + 4}}};
      data.resize(data.size() + 4);
    });
    check_error(import_hf_bytes(config, extra.data(), extra.size(), {.seq_len = 6}).status(), Code::kUnsupportedOp,
                "rotary.weight");
  }
  SECTION("a weight of an integer dtype: the error names the tensor and the dtype") {
    const std::vector<uint8_t> ints = bert_with([](J& header, std::vector<uint8_t>&) { header["pooler.dense.bias"]["dtype"] = "I32"; });
    const Status s = import_hf_bytes(config, ints.data(), ints.size(), {.seq_len = 6}).status();
    check_error(s, Code::kUnsupportedOp, "'pooler.dense.bias' has dtype I32");
  }
  SECTION("a layer count of zero is out of range") {
    J j = J::parse(config);
    j["num_hidden_layers"] = 0;
    const std::vector<uint8_t> bytes = test::read_file_bytes(test::kSafetensorsDir + "/bert/model.safetensors");
    check_error(import_hf_bytes(j.dump(), bytes.data(), bytes.size()).status(), Code::kInvalidArgument, "num_hidden_layers");
  }
}

TEST_CASE("hf import: hostile shard indexes are refused", "[frontend][safetensors][hostile]") {
  using J = nlohmann::json;
  auto import_with_index = [](const std::function<void(J&)>& edit) {
    EditedFolder folder("llama");
    folder.edit_json("model.safetensors.index.json", edit);
    return import_hf_folder(folder.path(), {.batch = 2, .seq_len = 5}).status();
  };
  check_error(import_with_index([](J& j) { j["weight_map"]["lm_head.weight"] = "../model-00003-of-00003.safetensors"; }),
              Code::kInvalidArgument, "not a file name");
  check_error(import_with_index([](J& j) { j["weight_map"]["lm_head.weight"] = "model-00001-of-00003.safetensors"; }),
              Code::kInvalidArgument, "the index puts 'lm_head.weight'");
  check_error(import_with_index([](J& j) { j["weight_map"].erase("lm_head.weight"); }), Code::kInvalidArgument,
              "not in the index");
  check_error(import_with_index([](J& j) { j["weight_map"]["extra.weight"] = "model-00001-of-00003.safetensors"; }),
              Code::kInvalidArgument, "does not have it");
  check_error(import_with_index([](J& j) { j["weight_map"] = 3; }), Code::kInvalidArgument, "weight_map");
  check_error(import_hf_folder(test::kSafetensorsDir + "/no_such_folder").status(), Code::kIo, "config.json");
}
