// LoRA in the recipe: the adapters' shapes and start (B = 0: the adapted model is the base
// model), their gradients against central finite differences of the loss, only adapters
// changing in training, the merged weight W + alpha/r B A giving the adapted model's logits, the
// decode function running the adapters too, and recipe errors naming the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "blob/reader.hpp"
#include "compiler/lowering/lora.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/models.hpp"
#include "pock/engine.hpp"

using namespace pock;

namespace {

models::LlamaConfig tiny() {
  models::LlamaConfig c;
  c.batch = 2, c.seq_len = 6, c.vocab_size = 24, c.hidden_size = 16, c.num_layers = 2, c.num_heads = 4;
  c.num_kv_heads = 2, c.intermediate_size = 20, c.initializer_range = 0.3, c.seed = 5, c.decode_cache = 6;
  return c;
}

Recipe lora_recipe(double lr) {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = lr;
  r.lora.rank = 4;
  r.lora.alpha = 8;
  r.lora.target_modules = {"q_proj", "model.layers.1.mlp.*"};
  return r;
}

// A blob and the engine reading it in place.
struct Compiled {
  std::vector<uint8_t> blob;
  std::optional<Engine> engine_;
  Engine& engine() { return *engine_; }
};

std::unique_ptr<Compiled> open(const Graph& g, const Recipe* recipe, bool expose = false) {
  CompileOptions options;
  options.expose_gradients = expose;
  auto blob = compile(g, recipe, options);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  auto c = std::make_unique<Compiled>();
  c->blob = std::move(blob.value());
  auto e = Engine::open_buffer(c->blob.data(), c->blob.size());
  INFO(e.status().to_string());
  REQUIRE(e.is_ok());
  c->engine_.emplace(std::move(e.value()));
  return c;
}

std::vector<int64_t> tokens(int64_t n, uint32_t seed, int64_t vocab) {
  std::mt19937 gen(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& t : v) t = int64_t(gen() % uint32_t(vocab));
  return v;
}

void feed(Engine& e, const models::LlamaConfig& c) {
  REQUIRE(e.set_input("input_ids", tokens(c.batch * c.seq_len, 1, c.vocab_size)).is_ok());
  REQUIRE(e.set_input("label", tokens(c.batch * c.seq_len, 2, c.vocab_size)).is_ok());
}

std::vector<float> param(Engine& e, const std::string& name, size_t count) {
  std::vector<float> v(count);
  REQUIRE(e.get_parameter(name, v.data(), v.size() * sizeof(float)).is_ok());
  return v;
}

}  // namespace

TEST_CASE("lora: adapters on the targeted modules, starting as the base model", "[compiler][lora]") {
  const models::LlamaConfig c = tiny();
  Graph g = models::llama_causal_lm(c).value();
  Graph adapted = g;
  const Recipe r = lora_recipe(0.1);
  auto n = add_lora_adapters(adapted, r.lora);
  REQUIRE(n.is_ok());
  CHECK(n.value().size() == 2 + 3);  // q_proj of both layers, gate/up/down of layer 1
  const TensorId a = adapted.find("model.layers.0.self_attn.q_proj.lora_A.weight");
  const TensorId b = adapted.find("model.layers.0.self_attn.q_proj.lora_B.weight");
  REQUIRE((a != kNoTensor && b != kNoTensor));
  CHECK(adapted.tensor(a).shape == Shape{4, 16});
  CHECK(adapted.tensor(b).shape == Shape{16, 4});
  CHECK(adapted.find("model.layers.0.mlp.up_proj.lora_A.weight") == kNoTensor);
  CHECK(adapted.find("model.layers.1.mlp.down_proj.lora_B.weight") != kNoTensor);

  auto base = open(g, nullptr);
  auto lora = open(g, &r);
  const std::vector<int64_t> ids = tokens(c.batch * c.seq_len, 1, c.vocab_size);
  for (auto* e : {&base->engine(), &lora->engine()}) {
    REQUIRE(e->set_input("input_ids", ids).is_ok());
    REQUIRE(e->infer().is_ok());
  }
  CHECK(base->engine().output<float>("logits").value() == lora->engine().output<float>("logits").value());
}

TEST_CASE("lora: adapter gradients equal central finite differences of the loss", "[compiler][lora]") {
  const models::LlamaConfig c = tiny();
  const Graph g = models::llama_causal_lm(c).value();
  const Recipe r = lora_recipe(0.0);  // lr 0: the step leaves the weights, its gradients are exposed
  auto m = open(g, &r, /*expose=*/true);
  Engine& e = m->engine();
  // B starts at zero, which makes A's gradient zero: move B first.
  const std::string mod = "model.layers.1.mlp.gate_proj";
  std::mt19937 gen(4);
  std::normal_distribution<float> nd(0.0f, 0.3f);
  std::vector<float> bw(20 * 4);
  for (float& v : bw) v = nd(gen);
  REQUIRE(e.set_parameter(mod + ".lora_B.weight", bw.data(), bw.size() * 4).is_ok());
  feed(e, c);
  REQUIRE(e.train_step().is_ok());
  for (const auto& [name, count] : {std::pair{mod + ".lora_A.weight", size_t(4 * 16)}, std::pair{mod + ".lora_B.weight", size_t(20 * 4)}}) {
    const std::vector<float> grad = e.output<float>(name + ".grad").value();
    std::vector<float> w = param(e, name, count);
    for (size_t i = 0; i < count; i += 7) {
      const float keep = w[i];
      const double h = 1e-2;
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        w[i] = keep + static_cast<float>(side ? -h : h);
        REQUIRE(e.set_parameter(name, w.data(), w.size() * 4).is_ok());
        loss[side] = e.eval_step().value();
      }
      w[i] = keep;
      REQUIRE(e.set_parameter(name, w.data(), w.size() * 4).is_ok());
      const double numeric = (loss[0] - loss[1]) / (2 * h);
      INFO(name << "[" << i << "]: analytic " << grad[i] << ", numeric " << numeric);
      CHECK(std::fabs(grad[i] - numeric) <= 2e-4 + 2e-2 * std::fabs(numeric));
    }
  }
}

TEST_CASE("lora: only the adapters train; the merged weight gives the adapted model; decode runs the adapters", "[compiler][lora]") {
  const models::LlamaConfig c = tiny();
  const Graph g = models::llama_causal_lm(c).value();
  const Recipe r = lora_recipe(0.5);
  auto m = open(g, &r);
  Engine& e = m->engine();
  const std::string mod = "model.layers.0.self_attn.q_proj";
  const std::vector<float> w0 = param(e, mod + ".weight", 16 * 16);
  for (int step = 0; step < 5; ++step) {
    feed(e, c);
    REQUIRE(e.train_step().is_ok());
  }
  CHECK(param(e, mod + ".weight", 16 * 16) == w0);
  const std::vector<float> a = param(e, mod + ".lora_A.weight", 4 * 16), b = param(e, mod + ".lora_B.weight", 16 * 4);
  CHECK(std::any_of(b.begin(), b.end(), [](float v) { return v != 0.0f; }));

  // The base model with every adapted weight merged, W + alpha / r * B A, computes the same logits.
  Graph merged = g;
  models::WeightMap weights;
  for (const TensorDesc& t : g.tensors()) {
    if (t.kind != TensorKind::kParameter) continue;
    const std::string name = t.name;
    std::vector<float> w = param(e, name, static_cast<size_t>(numel(t.shape)));
    const std::string module = name.substr(0, name.size() - 7);
    if (lora_targets(r.lora.target_modules, module) && t.shape.size() == 2) {
      const int64_t out = t.shape[0], in = t.shape[1];
      const std::vector<float> la = param(e, module + ".lora_A.weight", size_t(4 * in));
      const std::vector<float> lb = param(e, module + ".lora_B.weight", size_t(out * 4));
      for (int64_t o = 0; o < out; ++o) {
        for (int64_t i = 0; i < in; ++i) {
          double s = 0;
          for (int64_t k = 0; k < 4; ++k) s += double(lb[size_t(o * 4 + k)]) * la[size_t(k * in + i)];
          w[size_t(o * in + i)] += static_cast<float>(8.0 / 4.0 * s);
        }
      }
    }
    weights[name] = std::move(w);
  }
  REQUIRE(models::load_weights(merged, weights).is_ok());
  auto plain = open(merged, nullptr);
  const std::vector<int64_t> ids = tokens(c.batch * c.seq_len, 9, c.vocab_size);
  for (Engine* x : {&e, &plain->engine()}) {
    REQUIRE(x->set_input("input_ids", ids).is_ok());
    REQUIRE(x->infer().is_ok());
  }
  const std::vector<float> got = e.output<float>("logits").value(), want = plain->engine().output<float>("logits").value();
  float worst = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  CHECK(worst < 1e-4f);
  // The decode function reads the trained adapters: its logits are the forward's, position by position.
  for (int64_t s = 0; s < c.seq_len; ++s) {
    REQUIRE(e.set_input("decode.input_ids", std::vector<int64_t>{ids[size_t(s)]}).is_ok());
    REQUIRE(e.set_input("decode.position", std::vector<int64_t>{s}).is_ok());
    REQUIRE(e.run("decode").is_ok());
    const std::vector<float> step = e.output<float>("decode.logits").value();
    for (int64_t v = 0; v < c.vocab_size; ++v) CHECK(std::fabs(step[size_t(v)] - got[size_t(s * c.vocab_size + v)]) < 1e-4f);
  }
}

TEST_CASE("lora: recipe errors name the field", "[compiler][lora]") {
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": -2, "target_modules": ["q_proj"]}})").status().message(), Catch::Contains("lora.rank"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8}})").status().message(), Catch::Contains("lora.target_modules"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8, "target_modules": "q_proj"}})").status().message(), Catch::Contains("lora.target_modules"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8, "target_modules": ["q"], "alpah": 1}})").status().message(), Catch::Contains("lora.alpah"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8, "target_modules": ["q"], "dropout": 1.0}})").status().message(), Catch::Contains("lora.dropout"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8, "target_modules": ["q"], "layers": 4}})").status().message(), Catch::Contains("lora.layers"));
  CHECK_THAT(parse_recipe(R"({"lora": {"rank": 8, "target_modules": ["q"], "use_rslora": 1}})").status().message(),
             Catch::Contains("lora.use_rslora"));
  auto ok = parse_recipe(R"({"lora": {"rank": 8, "alpha": 16, "dropout": 0.05, "target_modules": ["q_proj", "*.v_proj"],
                                      "layers": "last:4", "use_rslora": true}})");
  REQUIRE(ok.is_ok());
  CHECK(ok->lora.rank == 8);
  CHECK(ok->lora.target_modules.size() == 2);
  CHECK(ok->lora.layers == "last:4");
  CHECK(ok->lora.scaling() == 16.0 / std::sqrt(8.0));
  Recipe none = lora_recipe(0.1);
  none.lora.target_modules = {"no_such_proj"};
  CHECK_THAT(compile(models::llama_causal_lm(tiny()).value(), &none).status().message(), Catch::Contains("no Linear layer"));
}

namespace {

// The engine's values of the base model's parameters and of the modules' adapters, by name, as
// merge_lora and models::load_weights take them (what `pockc train --save-weights` writes).
models::WeightMap engine_weights(Engine& e, const Graph& base, const std::vector<LoraModule>& modules) {
  models::WeightMap weights;
  for (const TensorDesc& t : base.tensors()) {
    if (t.kind == TensorKind::kParameter) weights[t.name] = param(e, t.name, static_cast<size_t>(numel(t.shape)));
  }
  for (const LoraModule& m : modules) {
    weights[m.name + ".lora_A.weight"] = param(e, m.name + ".lora_A.weight", static_cast<size_t>(m.rank * m.in));
    weights[m.name + ".lora_B.weight"] = param(e, m.name + ".lora_B.weight", static_cast<size_t>(m.out * m.rank));
  }
  return weights;
}

// LoRA on block 1's q_proj and v_proj only.
Recipe qv_of_last_block() {
  Recipe r = lora_recipe(0.1);
  r.lora.target_modules = {"q_proj", "*.v_proj"};
  r.lora.layers = "last:1";
  return r;
}

// The blob's program, read back as the runtime reads it.
ProgramSpec program_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, /*with_weights=*/false);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

std::map<std::string, int> op_counts(const ProgramSpec& spec, const std::string& function) {
  std::map<std::string, int> counts;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != function) continue;
    for (uint32_t op : f.ops) ++counts[spec.ops[op].op];
  }
  return counts;
}

// The same logits, element by element, within `tolerance`.
void check_same_logits(Engine& x, Engine& y, const std::vector<int64_t>& ids, float tolerance);

// The base model carrying `merged` weights computes the adapted engine's logits.
void check_merged_model(const Graph& base, const models::WeightMap& merged, Engine& adapted, uint32_t token_seed) {
  const models::LlamaConfig c = tiny();
  Graph g = base;
  REQUIRE(models::load_weights(g, merged).is_ok());
  auto plain = open(g, nullptr);
  check_same_logits(adapted, plain->engine(), tokens(c.batch * c.seq_len, token_seed, c.vocab_size), 1e-4f);
}

void check_same_logits(Engine& x, Engine& y, const std::vector<int64_t>& ids, float tolerance) {
  for (Engine* e : {&x, &y}) {
    REQUIRE(e->set_input("input_ids", ids).is_ok());
    REQUIRE(e->infer().is_ok());
  }
  const std::vector<float> got = x.output<float>("logits").value(), want = y.output<float>("logits").value();
  REQUIRE(got.size() == want.size());
  float worst = 0.0f;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  INFO("worst logit difference " << worst);
  CHECK(worst < tolerance);
}

}  // namespace

TEST_CASE("lora: lora_A starts as PyTorch's kaiming_uniform_(a=sqrt(5)), deterministic per seed", "[compiler][lora]") {
  const Graph g = models::llama_causal_lm(tiny()).value();
  Recipe r = lora_recipe(0.1);
  r.lora.rank = 16;
  auto values = [&](uint64_t seed) {
    Graph adapted = g;
    r.lora.seed = seed;
    const std::vector<LoraModule> modules = add_lora_adapters(adapted, r.lora).value();
    std::vector<float> all;
    for (const LoraModule& m : modules) {
      const TensorDesc& a = adapted.tensor(adapted.find(m.name + ".lora_A.weight"));
      const float* v = reinterpret_cast<const float*>(a.data->data());
      // PyTorch: gain = sqrt(2 / (1 + a^2)) = sqrt(1/3), bound = gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in).
      const double bound = 1.0 / std::sqrt(double(m.in));
      for (int64_t i = 0; i < m.rank * m.in; ++i) {
        CHECK(std::fabs(v[i]) <= bound);
        all.push_back(static_cast<float>(v[i] / bound));  // uniform on [-1, 1]: mean 0, variance 1/3
      }
      const TensorDesc& b = adapted.tensor(adapted.find(m.name + ".lora_B.weight"));
      const float* bv = reinterpret_cast<const float*>(b.data->data());
      CHECK(std::all_of(bv, bv + m.out * m.rank, [](float x) { return x == 0.0f; }));
    }
    return all;
  };
  const std::vector<float> first = values(0);
  double mean = 0, square = 0;
  for (float v : first) mean += v, square += double(v) * v;
  mean /= double(first.size());
  square /= double(first.size());
  INFO(first.size() << " values: mean " << mean << ", mean square " << square);
  CHECK(std::fabs(mean) < 4.0 / std::sqrt(3.0 * double(first.size())));
  CHECK(std::fabs(square - 1.0 / 3.0) < 0.03);
  CHECK(values(0) == first);
  CHECK(values(7) != first);
}

TEST_CASE("lora: layers picks blocks (peft's layers_to_transform), use_rslora scales by alpha / sqrt(rank)", "[compiler][lora]") {
  const models::LlamaConfig c = tiny();
  const Graph g = models::llama_causal_lm(c).value();
  Recipe r = qv_of_last_block();
  r.lora.use_rslora = true;
  const std::vector<LoraModule> modules = plan_lora(g, r.lora).value();
  REQUIRE(modules.size() == 2);
  CHECK(modules[0].name == "model.layers.1.self_attn.q_proj");
  CHECK(modules[1].name == "model.layers.1.self_attn.v_proj");
  CHECK(modules[1].out == 8);  // 2 KV heads of 4 dims
  CHECK(modules[0].scaling == 8.0 / 2.0);  // alpha 8, sqrt(rank 4)
  r.lora.use_rslora = false;
  CHECK(plan_lora(g, r.lora).value()[0].scaling == 8.0 / 4.0);
  r.lora.layers = "0:1";
  CHECK(plan_lora(g, r.lora).value()[0].name == "model.layers.0.self_attn.q_proj");
  r.lora.layers = "last:3";
  CHECK_THAT(plan_lora(g, r.lora).status().message(), Catch::Contains("lora.layers") && Catch::Contains("2 blocks"));
  r.lora.layers = "last:1";
  r.lora.target_modules = {"embed_tokens"};  // the tied LM head's Linear: matches, but lies in no block
  CHECK_THAT(plan_lora(g, r.lora).status().message(), Catch::Contains("lora.layers"));

  // With B moved off zero, the adapted model equals the base model with W + alpha/sqrt(r) B A.
  r.lora.target_modules = {"q_proj", "*.v_proj"};
  r.lora.use_rslora = true;
  auto m = open(g, &r);
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0.0f, 0.2f);
  for (const LoraModule& mod : modules) {
    std::vector<float> b(static_cast<size_t>(mod.out * mod.rank));
    for (float& v : b) v = nd(gen);
    REQUIRE(m->engine().set_parameter(mod.name + ".lora_B.weight", b.data(), b.size() * 4).is_ok());
  }
  models::WeightMap weights = engine_weights(m->engine(), g, modules);
  std::vector<LoraModule> by_hand = modules;
  for (LoraModule& mod : by_hand) mod.scaling = 8.0 / std::sqrt(4.0);
  REQUIRE(merge_lora(weights, by_hand).is_ok());
  check_merged_model(g, weights, m->engine(), 3);
}

TEST_CASE("lora: the blob records its modules; merge_lora of the trained engine's weights gives the adapted model", "[compiler][lora]") {
  const models::LlamaConfig c = tiny();
  const Graph g = models::llama_causal_lm(c).value();
  Recipe r = lora_recipe(0.5);
  r.optimizer.type = "adamw";
  r.optimizer.lr = 0.05;
  r.lora.dropout = 0.3;  // in the train function only: the merged model must still equal infer's
  auto m = open(g, &r);
  const std::vector<LoraModule> planned = plan_lora(g, r.lora).value();
  const std::vector<LoraModule> recorded = lora_modules_from_metadata(program_of(m->blob).metadata).value();
  REQUIRE(recorded.size() == planned.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    CHECK(recorded[i].name == planned[i].name);
    CHECK((recorded[i].in == planned[i].in && recorded[i].out == planned[i].out && recorded[i].rank == 4));
    CHECK(recorded[i].scaling == 2.0);
  }
  CHECK(lora_modules_from_metadata("{}").value().empty());
  CHECK_FALSE(lora_modules_from_metadata(R"({"lora": {"modules": [{"name": "x", "in": 2}]}})").is_ok());
  CHECK_FALSE(lora_modules_from_metadata("[1]").is_ok());

  for (int step = 0; step < 4; ++step) {
    feed(m->engine(), c);
    REQUIRE(m->engine().train_step().is_ok());
  }
  // With B off zero, the train function's dropout changes the loss of the same batch; eval's
  // forward (as infer's) has none.
  feed(m->engine(), c);
  const float eval_loss = m->engine().eval_step().value();
  const float train_loss = m->engine().train_step().value();
  INFO("eval " << eval_loss << ", train " << train_loss);
  CHECK(std::fabs(train_loss - eval_loss) > 1e-5f);
  models::WeightMap weights = engine_weights(m->engine(), g, recorded);
  // merge_lora against the definition, W + s * B A summed by hand, for one module.
  const LoraModule& q = recorded[0];
  const std::vector<float> w = weights[q.name + ".weight"], a = weights[q.name + ".lora_A.weight"], b = weights[q.name + ".lora_B.weight"];
  models::WeightMap missing = weights;
  missing.erase(recorded[1].name + ".lora_B.weight");
  CHECK_THAT(merge_lora(missing, recorded).message(), Catch::Contains(recorded[1].name + ".lora_B.weight"));
  CHECK(missing.count(q.name + ".lora_A.weight") == 1);  // unchanged on error
  REQUIRE(merge_lora(weights, recorded).is_ok());
  CHECK(weights.count(q.name + ".lora_A.weight") == 0);
  const std::vector<float>& merged_q = weights[q.name + ".weight"];
  for (int64_t o = 0; o < q.out; ++o) {
    for (int64_t i = 0; i < q.in; ++i) {
      double s = 0;
      for (int64_t k = 0; k < q.rank; ++k) s += double(b[size_t(o * q.rank + k)]) * a[size_t(k * q.in + i)];
      CHECK(std::fabs(merged_q[size_t(o * q.in + i)] - (w[size_t(o * q.in + i)] + 2.0 * s)) < 1e-6);
    }
  }
  check_merged_model(g, weights, m->engine(), 9);
}

TEST_CASE("lora: sparse backpropagation computes no frozen weight's gradient and only the input gradients adapters need", "[compiler][lora]") {
  const Graph g = models::llama_causal_lm(tiny()).value();
  const Recipe r = qv_of_last_block();
  auto m = open(g, &r);
  std::map<std::string, int> ops = op_counts(program_of(m->blob), "train");
  for (const auto& [op, n] : ops) INFO(op << " x" << n);
  // One weight gradient per adapter matrix (A and B of q_proj and v_proj in block 1), none for W.
  CHECK(ops["LinearWeightGrad"] == 4);
  // Input gradients, from the loss down to block 1's adapters and no further: the LM head, block
  // 1's down/up/gate projections and o_proj, and each lora_B (A's gradient needs B's input
  // gradient). Not block 1's q/k/v projections (their input leads only to frozen weights), not
  // lora_A, and nothing in block 0.
  CHECK(ops["LinearInputGrad"] == 1 + 3 + 1 + 2);
  CHECK(ops.count("GatherGrad") == 0);
}
