// Recipe "frozen_weights": "source" (and "q8_0"): frozen weights stay block-quantized. On the tiny
// llama that gguf-py wrote (tiny_llama.gguf: embedding and gate Q8_0, q/k/up Q4_1, v Q4_0,
// o_proj F16, down F32, tied LM head): which layers become LinearQ / GatherQ, that the f32
// originals leave the blob and the tied table is stored once, and that logits, loss and the
// trained block's gradients equal those of the f32 import ("f32": every weight dequantized by the
// reader, which test_gguf_reader checks against gguf-py).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "blob/reader.hpp"
#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/gguf.hpp"
#include "pock/compiler/models.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

const std::string kLlama = std::string(POCK_TESTS_DIR) + "/frontend/gguf/tiny_llama.gguf";
constexpr int64_t kVocab = 96;

Graph import(int64_t batch, int64_t seq) {
  auto g = import_gguf(kLlama, {batch, seq});
  INFO(g.status().to_string());
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

Recipe last_block_recipe(const std::string& frozen_weights) {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.0;  // the step computes gradients; the weights stay
  r.trainable = {TrainableRule{"model.layers.1.*", "", false, -1, -1}};
  r.frozen_weights = frozen_weights;
  return r;
}

std::vector<uint8_t> compile_ok(const Graph& g, const Recipe& r) {
  CompileOptions o;
  o.expose_gradients = true;
  auto blob = compile(g, &r, o);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  return std::move(blob.value());
}

ProgramSpec spec_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, /*with_weights=*/false);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

// name -> op of every op in `function` of the blob.
std::map<std::string, std::string> ops_of(const ProgramSpec& spec, const std::string& function) {
  std::map<std::string, std::string> out;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != function) continue;
    for (uint32_t i : f.ops) out[spec.ops[i].name] = spec.ops[i].op;
  }
  return out;
}

bool has_tensor(const ProgramSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return true;
  }
  return false;
}

std::vector<int64_t> token_ids(int64_t n, uint32_t seed) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = (i * 37 + seed * 11) % kVocab;
  return ids;
}

struct StepResult {
  std::vector<float> logits;
  float loss = 0.0f;
  std::map<std::string, std::vector<float>> grads;
};

StepResult run(const std::vector<uint8_t>& blob, int64_t batch, int64_t seq) {
  auto engine = Engine::open_buffer(blob.data(), blob.size());
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  StepResult r;
  const std::vector<int64_t> ids = token_ids(batch * seq, 1), labels = token_ids(batch * seq, 2);
  REQUIRE(engine->set_input("input_ids", ids).is_ok());
  REQUIRE(engine->infer().is_ok());
  r.logits.resize(static_cast<size_t>(batch * seq * kVocab));
  REQUIRE(engine->get_output("logits", r.logits.data(), r.logits.size() * sizeof(float)).is_ok());
  REQUIRE(engine->set_input("label", labels).is_ok());
  auto loss = engine->train_step();
  INFO(loss.status().to_string());
  REQUIRE(loss.is_ok());
  r.loss = loss.value();
  for (const char* p : {"model.layers.1.self_attn.q_proj.weight", "model.layers.1.mlp.up_proj.weight",
                        "model.layers.1.input_layernorm.weight"}) {
    auto g = engine->output<float>(std::string(p) + ".grad");
    INFO(p << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    r.grads[p] = g.value();
  }
  return r;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double scale = 0.0, diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return diff / std::max(scale, 1e-30);
}

// The same values up to f32 rounding: both sides multiply by the same weight values, in another
// order of operations.
void check_same_step(const StepResult& got, const StepResult& want) {
  CHECK(max_rel_diff(got.logits, want.logits) < 1e-5);
  CHECK(std::fabs(got.loss - want.loss) <= 1e-5 * std::fabs(want.loss));
  for (const auto& [name, grad] : want.grads) {
    INFO(name);
    CHECK(max_rel_diff(got.grads.at(name), grad) < 1e-4);
  }
}

}  // namespace

TEST_CASE("the GGUF importer keeps quantized weights' blocks, q/k rows in transformers' order", "[compiler][gguf][block_quant]") {
  const Graph g = import(1, 4);
  std::map<std::string, std::string> formats;
  for (const TensorDesc& t : g.tensors()) {
    if (!t.source_blocks) continue;
    formats[t.name] = t.source_blocks->format;
    // The blocks decode to the f32 values the importer made (after its q/k row permutation).
    const std::optional<BlockFormat> f = parse_block_format(t.source_blocks->format);
    REQUIRE(f);
    std::vector<float> decoded(static_cast<size_t>(numel(t.shape)));
    decode_blocks(*f, t.source_blocks->rows->data(), numel(t.shape) / block_layout(*f).values, decoded.data());
    std::vector<float> values(decoded.size());
    std::memcpy(values.data(), t.data->data(), t.data->size());
    INFO(t.name);
    CHECK(decoded == values);
  }
  CHECK(formats["model.embed_tokens.weight"] == "q8_0");
  CHECK(formats["model.layers.0.self_attn.q_proj.weight"] == "q4_1");
  CHECK(formats["model.layers.1.self_attn.k_proj.weight"] == "q4_1");
  CHECK(formats["model.layers.0.self_attn.v_proj.weight"] == "q4_0");
  CHECK(formats["model.layers.0.mlp.gate_proj.weight"] == "q8_0");
  CHECK(formats.count("model.layers.0.self_attn.o_proj.weight") == 0);  // F16 in the file
  CHECK(formats.count("model.layers.0.mlp.down_proj.weight") == 0);     // F32
  CHECK(formats.size() == 11);

  GgufImportOptions off;
  off.keep_source_blocks = false;
  auto plain = import_gguf(kLlama, off);
  REQUIRE(plain.is_ok());
  for (const TensorDesc& t : plain->tensors()) CHECK_FALSE(t.source_blocks);
}

TEST_CASE("frozen_weights source: frozen quantized layers run as LinearQ / GatherQ, the f32 originals leave the blob",
          "[compiler][gguf][block_quant]") {
  const Graph g = import(2, 8);
  const std::vector<uint8_t> f32 = compile_ok(g, last_block_recipe("f32"));
  const std::vector<uint8_t> source = compile_ok(g, last_block_recipe("source"));
  const ProgramSpec spec = spec_of(source);
  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    const std::map<std::string, std::string> ops = ops_of(spec, fn);
    int linear_q = 0, gather_q = 0, linear = 0;
    for (const auto& [name, op] : ops) {
      linear_q += op == "LinearQ";
      gather_q += op == "GatherQ";
      linear += op == "Linear";
    }
    // Block 0: q, k, v, gate, up (o_proj F16 and down F32 stay Linear), and the tied LM head;
    // block 1 trains: its 7 Linears stay f32.
    CHECK(linear_q == 6);
    CHECK(gather_q == 1);
    CHECK(linear == 2 + 7);
  }
  const std::map<std::string, std::string> train = ops_of(spec, "train");
  int input_grads = 0;
  for (const auto& [name, op] : train) input_grads += op == "LinearQInputGrad";
  CHECK(input_grads == 1);  // the LM head's, above the trained block; nothing below it needs dx
  CHECK_FALSE(has_tensor(spec, "model.embed_tokens.weight"));
  CHECK_FALSE(has_tensor(spec, "model.layers.0.self_attn.q_proj.weight"));
  CHECK(has_tensor(spec, "model.embed_tokens.weight.q8_0"));
  int embed_tables = 0;
  for (const TensorSpec& t : spec.tensors) embed_tables += t.name.rfind("model.embed_tokens.weight", 0) == 0;
  CHECK(embed_tables == 1);  // the GatherQ table is the LM head's weight too
  CHECK(has_tensor(spec, "model.layers.0.self_attn.o_proj.weight"));   // F16 in the file: f32
  CHECK(has_tensor(spec, "model.layers.1.self_attn.q_proj.weight"));   // trains: f32
  CHECK(source.size() < f32.size());
}

TEST_CASE("frozen_weights source: logits, loss and gradients equal the f32 import's", "[compiler][gguf][block_quant]") {
  // batch 1 x seq 4: few rows (the cpu kernels' streaming path); 2 x 8: decoded panels.
  for (const auto& [batch, seq] : {std::pair<int64_t, int64_t>{1, 4}, {2, 8}}) {
    INFO("batch " << batch << " seq " << seq);
    const Graph g = import(batch, seq);
    const StepResult f32 = run(compile_ok(g, last_block_recipe("f32")), batch, seq);
    const StepResult source = run(compile_ok(g, last_block_recipe("source")), batch, seq);
    check_same_step(source, f32);
  }
}

TEST_CASE("frozen_weights q8_0: any f32 model's frozen layers as Q8_0 blocks", "[compiler][block_quant]") {
  models::LlamaConfig c;
  c.batch = 1, c.seq_len = 4, c.vocab_size = kVocab, c.hidden_size = 64, c.num_layers = 2, c.num_heads = 4;
  c.num_kv_heads = 2, c.intermediate_size = 96, c.initializer_range = 0.1, c.seed = 5;
  auto g = models::llama_causal_lm(c);
  REQUIRE(g.is_ok());
  const std::vector<uint8_t> q8 = compile_ok(g.value(), last_block_recipe("q8_0"));
  const ProgramSpec spec = spec_of(q8);
  int linear_q = 0;
  for (const auto& [name, op] : ops_of(spec, "infer")) linear_q += op == "LinearQ";
  CHECK(linear_q == 8);  // block 0's seven and the tied LM head
  CHECK_FALSE(has_tensor(spec, "model.layers.0.mlp.down_proj.weight"));
  CHECK(has_tensor(spec, "model.layers.0.mlp.down_proj.weight.q8_0"));
  // The oracle: the f32 model with each frozen matrix replaced by its Q8_0 round trip through the
  // GGUF writer's quantizer and reader (both checked against gguf-py).
  Graph rounded = g.value();
  for (TensorId id = 0; id < static_cast<TensorId>(rounded.num_tensors()); ++id) {
    TensorDesc& t = rounded.mutable_tensor(id);
    if (t.kind != TensorKind::kParameter || t.shape.size() != 2 || t.name.rfind("model.layers.1.", 0) == 0) continue;
    std::vector<float> v(static_cast<size_t>(numel(t.shape)));
    std::memcpy(v.data(), t.data->data(), t.data->size());
    auto blocks = gguf::from_f32(gguf::kQ8_0, v.data(), v.size());
    REQUIRE(blocks.is_ok());
    REQUIRE(gguf::to_f32(gguf::kQ8_0, blocks->data(), v.size(), v.data()).is_ok());
    auto bytes = std::make_shared<std::vector<uint8_t>>(t.data->size());
    std::memcpy(bytes->data(), v.data(), bytes->size());
    t.data = std::move(bytes);
  }
  const StepResult want = run(compile_ok(rounded, last_block_recipe("f32")), 1, 4), got = run(q8, 1, 4);
  check_same_step(got, want);
}

TEST_CASE("frozen_weights takes source and q8_0", "[compiler][block_quant][recipe]") {
  CHECK(parse_recipe(R"({"frozen_weights": "source"})").is_ok());
  CHECK(parse_recipe(R"({"frozen_weights": "q8_0"})").is_ok());
  CHECK_THAT(parse_recipe(R"({"frozen_weights": "q4"})").status().message(), Catch::Contains("source"));
}

TEST_CASE("frozen_matmul int8: integer products, the LM head and its loss fused; close to the exact step",
          "[compiler][gguf][block_quant]") {
  const int64_t batch = 2, seq = 8;
  const Graph g = import(batch, seq);
  Recipe int8 = last_block_recipe("source");
  int8.frozen_matmul = "int8";
  const std::vector<uint8_t> blob = compile_ok(g, int8);
  const ProgramSpec spec = spec_of(blob);
  for (const char* fn : {"train", "eval"}) {
    INFO(fn);
    int fused = 0, losses = 0, int8_ops = 0;
    for (const auto& [name, op] : ops_of(spec, fn)) {
      fused += op == "LinearQCrossEntropy";
      losses += op == "SoftmaxCrossEntropy";
    }
    for (const FunctionSpec& f : spec.functions) {
      if (f.name != fn) continue;
      for (uint32_t i : f.ops) int8_ops += spec.ops[i].attrs.get_string("compute", "f32") == "int8";
    }
    CHECK(fused == 1);
    CHECK(losses == 0);
    CHECK(int8_ops >= 6);  // block 0's five block-quantized Linears and the head (its gradient too in train)
  }
  // The integer arithmetic moves results by the activations' rounding (1/254 of each 32-value
  // block's largest), far from the f32 step's values only if something is wrong.
  const StepResult exact = run(compile_ok(g, last_block_recipe("source")), batch, seq);
  const StepResult got = run(blob, batch, seq);
  CHECK(max_rel_diff(got.logits, exact.logits) < 3e-2);
  CHECK(std::fabs(got.loss - exact.loss) <= 1e-2 * std::fabs(exact.loss));
  for (const auto& [name, grad] : exact.grads) {
    INFO(name);
    CHECK(max_rel_diff(got.grads.at(name), grad) < 5e-2);
  }
  CHECK_THAT(parse_recipe(R"({"frozen_matmul": "int8"})").status().message(), Catch::Contains("frozen_weights"));
  CHECK_THAT(parse_recipe(R"({"frozen_weights": "source", "frozen_matmul": "int4"})").status().message(),
             Catch::Contains("frozen_matmul"));
}
