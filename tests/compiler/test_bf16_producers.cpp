// Recipe precision "bf16": a GELU, Transpose or binary arithmetic op whose output only a bf16 GEMM
// operand copy reads writes that copy itself (src/compiler/lowering/bf16_producers.hpp):
//   - in the MLP x -> Linear -> Gelu -> Linear, the Gelu writes bf16 (output_dtype) and the down
//     projection and its weight gradient read it; no Cast of it is left, nor its f32 original;
//   - a GELU output read by anything else keeps its f32 output and its Cast;
//   - the fp32 recipe, and a compile for cuda, leave every Gelu f32;
//   - attention's head splits: the Transposes of q and k write the bf16 operands of q kᵀ;
//   - a gated MLP's silu(gate) * up writes the down projection's operand, and its gradient into
//     the up projection that projection's weight gradient's; a product with another reader, one
//     the caller reads, or one times a column (a broadcast the cpu kernel does not write bf16 in)
//     keeps its Cast;
//   - a binary op writes bf16 for exactly the operand shapes the cpu kernel writes bf16 from;
//   - a step on cpu gives the weights ref gives, within bf16 rounding; an Add writing bf16 is not
//     fused into the Linear before it as its bias;
//   - a small LLaMA's steps on cpu: the same losses and weights, to the bit, with every fold of
//     its blob undone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/compile.hpp"
#include "compiler/lowering/bf16_producers.hpp"
#include "compiler/passes/rewrite_util.hpp"
#include "pock/compiler/models.hpp"
#include "support/backend_compare.hpp"
#include "support/blob_inputs.hpp"
#include "support/engine_parameter.hpp"
#include "support/op_runner.hpp"
#include "support/training_program.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int64_t kRows = 12, kWidth = 16, kHidden = 24;

// loss = sum(Linear(Gelu(Linear(x, w1)), w2)) [+ sum(Gelu(...)) when `gelu_read_twice`].
Graph build_mlp(bool gelu_read_twice) {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {kRows, kWidth});
  const TensorId w1 = g.add_parameter_f32("w1", {kHidden, kWidth}, random_floats(kHidden * kWidth, 3));
  const TensorId w2 = g.add_parameter_f32("w2", {kWidth, kHidden}, random_floats(kWidth * kHidden, 4));
  const TensorId h = g.add_node("Linear", {x, w1}).value()[0];
  const TensorId a = g.add_node("Gelu", {h}, {}, "gelu", {"a"}).value()[0];
  const TensorId y = g.add_node("Linear", {a, w2}).value()[0];
  TensorId loss = g.add_node("ReduceSum", {y}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  if (gelu_read_twice) {
    const TensorId extra = g.add_node("ReduceSum", {a}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
    loss = g.add_node("Add", {loss, extra}).value()[0];
  }
  REQUIRE(g.mark_output(loss, "y").is_ok());
  return g;
}

Recipe recipe(const char* precision) { return sgd_on_output_recipe(precision); }

const FunctionDef& train_of(const TrainingProgram& program) {
  for (const FunctionDef& f : program.functions) {
    if (f.name == "train") return f;
  }
  FAIL("no train function");
  return program.functions.front();
}

const Node& gelu_of(const FunctionDef& fn) {
  for (const Node& n : fn.nodes) {
    if (n.op == "Gelu") return n;
  }
  FAIL("no Gelu");
  return fn.nodes.front();
}

int casts_of(const FunctionDef& fn, TensorId source) {
  int casts = 0;
  for (const Node& n : fn.nodes) casts += n.op == "Cast" && n.inputs[0] == source;
  return casts;
}

}  // namespace

TEST_CASE("bf16: a GELU read only by bf16 GEMMs writes their bf16 operand itself", "[compiler][bf16]") {
  const TrainingProgram program = build_training_program(build_mlp(false), recipe("bf16"));
  const Graph& g = program.graph;
  const FunctionDef& train = train_of(program);
  const Node& gelu = gelu_of(train);
  const TensorId a = gelu.outputs[0];
  CHECK(g.tensor(a).dtype == DType::kBF16);
  const AttrValue* output = gelu.attrs.find("output_dtype");
  REQUIRE(output != nullptr);
  CHECK(std::get<std::string>(*output) == "bf16");
  CHECK(casts_of(train, a) == 0);
  const TensorId a_f32 = g.find("train/a");  // the f32 original: neither written nor read any more
  for (const Node& n : train.nodes) {
    CHECK(std::count(n.inputs.begin(), n.inputs.end(), a_f32) == 0);
    CHECK(std::count(n.outputs.begin(), n.outputs.end(), a_f32) == 0);
  }
  int gemm_readers = 0;
  for (const Node& n : train.nodes) {
    if (std::count(n.inputs.begin(), n.inputs.end(), a) == 0) continue;
    INFO(n.op << " reads the GELU's output");
    CHECK((n.op == "Linear" || n.op == "LinearWeightGrad"));
    ++gemm_readers;
  }
  CHECK(gemm_readers == 2);  // the down projection and its weight gradient
  // The backward starts right after the forward: the Cast that is gone was a forward node.
  int forward_casts = 0;
  for (int32_t i = 0; i < train.backward_begin; ++i) forward_casts += train.nodes[static_cast<size_t>(i)].op == "Cast";
  const FunctionDef& fp32_train = train_of(build_training_program(build_mlp(false), recipe("fp32")));
  CHECK(train.backward_begin == fp32_train.backward_begin + forward_casts);
}

TEST_CASE("bf16: a GELU output with another reader stays f32, and so does every GELU of fp32 or cuda", "[compiler][bf16]") {
  {
    const TrainingProgram program = build_training_program(build_mlp(true), recipe("bf16"));
    const FunctionDef& train = train_of(program);
    const Node& gelu = gelu_of(train);
    CHECK(program.graph.tensor(gelu.outputs[0]).dtype == DType::kF32);
    CHECK(gelu.attrs.find("output_dtype") == nullptr);
    CHECK(casts_of(train, gelu.outputs[0]) == 1);
  }
  CompileOptions for_cuda;
  for_cuda.backend = "cuda";
  for (const TrainingProgram& program : {build_training_program(build_mlp(false), recipe("fp32")),
                                         build_training_program(build_mlp(false), recipe("bf16"), for_cuda)}) {
    for (const FunctionDef& f : program.functions) {
      for (const Node& n : f.nodes) {
        if (n.op == "Gelu") CHECK(program.graph.tensor(n.outputs[0]).dtype == DType::kF32);
      }
    }
  }
}

TEST_CASE("bf16: the MLP with its GELU writing bf16 trains on cpu as on ref", "[compiler][bf16]") {
  const Graph model = build_mlp(false);
  const Recipe bf16 = recipe("bf16");
  auto blob = compile(model, &bf16);
  REQUIRE(blob.is_ok());
  const std::vector<float> x = random_floats(kRows * kWidth, 40, -2.0f, 2.0f);
  check_cpu_step_follows_ref(blob->data(), blob->size(), x, "w1", random_floats(kHidden * kWidth, 3), 1e-4);
}

namespace {

// loss = sum(split(Linear(x, wq)) split(Linear(x, wk))ᵀ), split: [rows, heads * d] -> [heads, rows, d].
Graph build_scores() {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {kRows, kWidth});
  auto split = [&](const char* name, uint32_t seed) {
    const TensorId w = g.add_parameter_f32(name, {kWidth, kWidth}, random_floats(kWidth * kWidth, seed));
    const TensorId y = g.add_node("Linear", {x, w}).value()[0];
    const Attrs shape{{"shape", std::vector<int64_t>{kRows, 2, kWidth / 2}}};
    const TensorId heads = g.add_node("Reshape", {y}, shape).value()[0];
    return g.add_node("Transpose", {heads}, Attrs{{"perm", std::vector<int64_t>{1, 0, 2}}}).value()[0];
  };
  const TensorId q = split("wq", 5), k = split("wk", 6);
  const TensorId scores = g.add_node("MatMul", {q, k}, Attrs{{"transpose_b", int64_t{1}}}).value()[0];
  const TensorId loss = g.add_node("ReduceSum", {scores}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  REQUIRE(g.mark_output(loss, "y").is_ok());
  return g;
}

}  // namespace

TEST_CASE("bf16: attention's head splits write the bf16 operands of the score MatMul", "[compiler][bf16]") {
  const TrainingProgram program = build_training_program(build_scores(), recipe("bf16"));
  const Graph& g = program.graph;
  const FunctionDef& train = train_of(program);
  int forward_matmuls = 0;
  for (const Node& n : train.nodes) {
    if (n.op != "MatMul" || n.phase != Phase::kForward) continue;
    ++forward_matmuls;
    const FunctionUses uses(train);
    for (TensorId operand : n.inputs) {
      CHECK(g.tensor(operand).dtype == DType::kBF16);
      const int p = uses.producer(operand);
      REQUIRE(p >= 0);
      const Node& producer = train.nodes[static_cast<size_t>(p)];
      CHECK(producer.op == "Transpose");
      CHECK(producer.attrs.find("output_dtype") != nullptr);
    }
  }
  CHECK(forward_matmuls == 1);

  const Recipe bf16 = recipe("bf16");
  auto blob = compile(build_scores(), &bf16);
  REQUIRE(blob.is_ok());
  const std::vector<float> x = random_floats(kRows * kWidth, 41, -2.0f, 2.0f);
  check_cpu_step_follows_ref(blob->data(), blob->size(), x, "wq", random_floats(kWidth * kWidth, 5), 1e-4);
}

namespace {

// How the gated MLP's product m = Silu(Linear(x, wg)) * Linear(x, wu) is read besides the down
// projection Linear(m, wd): not at all, by a Mul with a column (col [rows, 1], a broadcast the cpu
// kernel does not write bf16 in) before the down projection, by a ReduceSum added to the loss, or
// as a model output.
enum class GatedRead { kOnlyGemm, kTimesColumn, kSummedToo, kModelOutput };

// loss = sum(Linear(m [* col], wd)) [+ sum(m)].
Graph build_gated_mlp(GatedRead read) {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {kRows, kWidth});
  const TensorId wg = g.add_parameter_f32("wg", {kHidden, kWidth}, random_floats(kHidden * kWidth, 7));
  const TensorId wu = g.add_parameter_f32("wu", {kHidden, kWidth}, random_floats(kHidden * kWidth, 8));
  const TensorId wd = g.add_parameter_f32("wd", {kWidth, kHidden}, random_floats(kWidth * kHidden, 9));
  const TensorId gate = g.add_node("Silu", {g.add_node("Linear", {x, wg}).value()[0]}).value()[0];
  const TensorId m = g.add_node("Mul", {gate, g.add_node("Linear", {x, wu}).value()[0]}, {}, "gated", {"m"}).value()[0];
  TensorId down_input = m;
  if (read == GatedRead::kTimesColumn) {
    const TensorId col = g.add_input("col", DType::kF32, {kRows, 1});
    down_input = g.add_node("Mul", {m, col}, {}, "scaled", {"m_scaled"}).value()[0];
  }
  const TensorId y = g.add_node("Linear", {down_input, wd}).value()[0];
  TensorId loss = g.add_node("ReduceSum", {y}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  if (read == GatedRead::kSummedToo) {
    const TensorId extra = g.add_node("ReduceSum", {m}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
    loss = g.add_node("Add", {loss, extra}).value()[0];
  }
  REQUIRE(g.mark_output(loss, "y").is_ok());
  if (read == GatedRead::kModelOutput) REQUIRE(g.mark_output(m, "m_out").is_ok());
  return g;
}

const FunctionDef& function_named(const TrainingProgram& program, const std::string& name) {
  for (const FunctionDef& f : program.functions) {
    if (f.name == name) return f;
  }
  FAIL("no function " << name);
  return program.functions.front();
}

const Node& node_named(const FunctionDef& fn, const std::string& name) {
  for (const Node& n : fn.nodes) {
    if (n.name == name) return n;
  }
  FAIL("no node " << name << " in " << fn.name);
  return fn.nodes.front();
}

DType output_dtype(const TrainingProgram& program, const Node& n) { return program.graph.tensor(n.outputs[0]).dtype; }

// The binary arithmetic nodes of `fn` that write bf16, by phase.
int bf16_binary_ops(const TrainingProgram& program, const FunctionDef& fn, Phase phase) {
  int count = 0;
  for (const Node& n : fn.nodes) {
    const bool binary = n.op == "Add" || n.op == "Sub" || n.op == "Mul" || n.op == "Div";
    count += binary && n.phase == phase && output_dtype(program, n) == DType::kBF16;
  }
  return count;
}

}  // namespace

TEST_CASE("bf16: a gated MLP's product, and its gradient into the up projection, write bf16 GEMM operands",
          "[compiler][bf16]") {
  const TrainingProgram program = build_training_program(build_gated_mlp(GatedRead::kOnlyGemm), recipe("bf16"));
  const FunctionDef& train = train_of(program);
  const Node& gated = node_named(train, "train/gated");
  CHECK(output_dtype(program, gated) == DType::kBF16);
  const AttrValue* attr = gated.attrs.find("output_dtype");
  REQUIRE(attr != nullptr);
  CHECK(std::get<std::string>(*attr) == "bf16");
  CHECK(casts_of(train, gated.outputs[0]) == 0);
  CHECK(output_dtype(program, node_named(function_named(program, "infer"), "gated")) == DType::kBF16);
  // Backward: dm * gate is read by the up projection's weight gradient only (a GEMM); dm * up
  // by SiluGrad, which stays f32.
  CHECK(bf16_binary_ops(program, train, Phase::kBackward) == 1);
  int f32_backward_muls = 0;
  for (const Node& n : train.nodes) f32_backward_muls += n.op == "Mul" && n.phase == Phase::kBackward && output_dtype(program, n) == DType::kF32;
  CHECK(f32_backward_muls >= 1);

  const Recipe bf16 = recipe("bf16");
  auto blob = compile(build_gated_mlp(GatedRead::kOnlyGemm), &bf16);
  REQUIRE(blob.is_ok());
  const std::vector<float> x = random_floats(kRows * kWidth, 42, -2.0f, 2.0f);
  check_cpu_step_follows_ref(blob->data(), blob->size(), x, "wu", random_floats(kHidden * kWidth, 8), 1e-4);
}

TEST_CASE("bf16: a product with another reader, a model output or a column broadcast keeps its Cast", "[compiler][bf16]") {
  {
    INFO("m summed into the loss as well");
    const TrainingProgram program = build_training_program(build_gated_mlp(GatedRead::kSummedToo), recipe("bf16"));
    const FunctionDef& train = train_of(program);
    const Node& gated = node_named(train, "train/gated");
    CHECK(output_dtype(program, gated) == DType::kF32);
    CHECK(gated.attrs.find("output_dtype") == nullptr);
    CHECK(casts_of(train, gated.outputs[0]) == 1);
  }
  {
    INFO("m a model output: the infer function returns it");
    const TrainingProgram program = build_training_program(build_gated_mlp(GatedRead::kModelOutput), recipe("bf16"));
    const FunctionDef& infer = function_named(program, "infer");
    const Node& gated = node_named(infer, "gated");
    CHECK(output_dtype(program, gated) == DType::kF32);
    CHECK(casts_of(infer, gated.outputs[0]) == 1);
  }
  {
    INFO("m times a column, then the down projection");
    const TrainingProgram program = build_training_program(build_gated_mlp(GatedRead::kTimesColumn), recipe("bf16"));
    const FunctionDef& train = train_of(program);
    const Node& scaled = node_named(train, "train/scaled");
    CHECK(output_dtype(program, scaled) == DType::kF32);
    CHECK(casts_of(train, scaled.outputs[0]) == 1);
    CHECK(output_dtype(program, node_named(train, "train/gated")) == DType::kF32);  // read by the Mul only
  }
}

TEST_CASE("bf16: the compiler has a binary op write bf16 exactly where the cpu kernel writes it", "[compiler][bf16]") {
  // Operand shapes against what the engine that prefers cpu binds the op to: cpu where the
  // compiler would fold the Cast, ref (which runs every broadcast) where it would not.
  const std::pair<Shape, Shape> cases[] = {
      {{6, 40}, {6, 40}},    {{6, 40}, {1}},          {{1, 1}, {6, 40}},      {{6, 40}, {40}},       {{1, 40}, {6, 40}},
      {{2, 6, 40}, {1, 1, 40}}, {{2, 6, 40}, {6, 40}}, {{6, 40}, {1, 6, 40}}, {{6, 40}, {6, 1}},     {{40, 1}, {3, 40, 1}},
      {{3, 40, 1}, {1}},     {{6, 1, 40}, {1, 5, 40}}, {{6, 40}, {1, 1, 1}},  {{2, 6, 40}, {2, 1, 40}}};
  for (const auto& [a, b] : cases) {
    Graph g;
    const TensorId ia = g.add_input("in0", DType::kF32, a), ib = g.add_input("in1", DType::kF32, b);
    REQUIRE(g.add_node("Mul", {ia, ib}, Attrs{{"output_dtype", std::string("bf16")}}, "node").is_ok());
    const bool folds = writes_bf16_output(g, g.nodes().back());
    const OpCase c{"Mul", {input(a, 1), input(b, 2)}, Attrs{{"output_dtype", std::string("bf16")}}};
    INFO("operands of " << numel(a) << " and " << numel(b) << " values, ranks " << a.size() << " and " << b.size());
    CHECK(BoundCase::open(c, "cpu").backend_of("Mul") == (folds ? "cpu" : "ref"));
  }
}

namespace {

// Undoes fold_bf16_casts_into_producers: each producer writing bf16 writes its f32 result again,
// and a Cast after it makes the bf16 copy its readers read, as share_bf16_operands left it.
// Returns how many producers of each op it undid.
std::map<std::string, int> unfold_bf16_producers(TrainingProgram& program) {
  Graph& g = program.graph;
  std::map<std::string, int> undone;
  for (FunctionDef& fn : program.functions) {
    std::vector<Node> nodes;
    int32_t inserted_before_backward = 0;
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      Node& n = fn.nodes[k];
      const AttrValue* output = n.attrs.find("output_dtype");
      const auto* dtype = output ? std::get_if<std::string>(output) : nullptr;
      if (!dtype || *dtype != "bf16") {
        nodes.push_back(std::move(n));
        continue;
      }
      const TensorId copy = n.outputs[0];
      Attrs attrs = n.attrs;
      attrs.set("output_dtype", std::string("f32"));
      const std::string f32_name = g.unique_name(g.tensor(copy).name + ".f32");
      auto f32 = g.create_node(n.op, n.inputs, attrs, n.name, {f32_name});
      REQUIRE(f32.is_ok());
      REQUIRE(g.tensor(f32->outputs[0]).dtype == DType::kF32);
      f32->phase = n.phase;
      const std::string cast_name = g.unique_name(f32_name + ".cast");
      auto cast = g.create_node("Cast", {f32->outputs[0]}, Attrs{{"to", std::string("bf16")}}, cast_name, {cast_name});
      REQUIRE(cast.is_ok());
      cast->outputs[0] = copy;
      cast->phase = n.phase;
      nodes.push_back(std::move(f32.value()));
      nodes.push_back(std::move(cast.value()));
      if (fn.backward_begin >= 0 && k < static_cast<size_t>(fn.backward_begin)) ++inserted_before_backward;
      ++undone[n.op];
    }
    fn.nodes = std::move(nodes);
    if (fn.backward_begin >= 0) fn.backward_begin += inserted_before_backward;
  }
  return undone;
}

struct StepResults {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
};

// Three train steps of `blob` on cpu (one thread) from the same tokens and labels, and then
// `weights`.
StepResults train_three_steps(const std::vector<uint8_t>& blob, int64_t vocab, const std::vector<std::string>& weights) {
  Engine::Options options;
  options.backend = "cpu";
  options.num_threads = 1;
  auto engine = Engine::open_buffer(blob.data(), blob.size(), options);
  REQUIRE(engine.is_ok());
  uint32_t seed = 60;
  for (const auto& [name, nbytes] : blob_inputs(blob)) {
    std::mt19937 gen(++seed);
    std::uniform_int_distribution<int64_t> token(0, vocab - 1);
    std::vector<int64_t> ids(nbytes / sizeof(int64_t));
    for (int64_t& id : ids) id = token(gen);
    REQUIRE(engine->set_input(name, ids).is_ok());
  }
  StepResults r;
  for (int step = 0; step < 3; ++step) {
    auto loss = engine->train_step();
    REQUIRE(loss.is_ok());
    r.losses.push_back(*loss);
  }
  for (const std::string& w : weights) r.weights.push_back(parameter_values(*engine, w));
  return r;
}

}  // namespace

TEST_CASE("bf16: LLaMA's steps on cpu give the same bits with the Casts folded into their producers as without",
          "[compiler][bf16][llama]") {
  const models::LlamaConfig config{.batch = 2, .seq_len = 16, .vocab_size = 64, .hidden_size = 64, .num_layers = 2,
                                   .num_heads = 4, .num_kv_heads = 2, .intermediate_size = 96};
  auto model = models::llama_causal_lm(config);
  REQUIRE(model.is_ok());
  Recipe recipe;
  recipe.loss.type = "cross_entropy";
  recipe.loss.logits = "logits";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.5;
  recipe.precision = "bf16";
  TrainingProgram folded = build_training_program(*model, recipe);
  TrainingProgram unfolded = folded;
  const std::map<std::string, int> undone = unfold_bf16_producers(unfolded);
  // Each layer's gated MLP product in the infer, train and eval functions, and its gradient into
  // the up projection; the backward's context-gradient head splits (the forward's q and k go
  // through RoPE first).
  CHECK(undone == std::map<std::string, int>{{"Mul", 8}, {"Transpose", 2}});
  auto with_folds = compile_program(folded, {});
  REQUIRE(with_folds.is_ok());
  auto without = compile_program(unfolded, {});
  REQUIRE(without.is_ok());
  const std::vector<std::string> weights = {"model.layers.0.mlp.up_proj.weight", "model.layers.1.mlp.gate_proj.weight",
                                            "model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight"};
  const StepResults a = train_three_steps(*with_folds, config.vocab_size, weights);
  const StepResults b = train_three_steps(*without, config.vocab_size, weights);
  CHECK(a.losses[2] != a.losses[0]);  // the steps train
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    CHECK(a.losses[static_cast<size_t>(step)] == b.losses[static_cast<size_t>(step)]);
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    INFO(weights[i]);
    CHECK(a.weights[i] == b.weights[i]);
  }
}

TEST_CASE("bf16: an Add writing a bf16 operand is not fused into the Linear before it as its bias", "[compiler][bf16]") {
  // Linear(x, w1) + b (b a trainable [hidden], what fuse_bias_adds makes a bias) -> Linear: the
  // Add writes the second Linear's bf16 operand, which the first Linear cannot write.
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {kRows, kWidth});
  const TensorId w1 = g.add_parameter_f32("w1", {kHidden, kWidth}, random_floats(kHidden * kWidth, 3));
  const TensorId b = g.add_parameter_f32("b", {kHidden}, random_floats(kHidden, 10));
  const TensorId w2 = g.add_parameter_f32("w2", {kWidth, kHidden}, random_floats(kWidth * kHidden, 4));
  const TensorId h = g.add_node("Add", {g.add_node("Linear", {x, w1}).value()[0], b}, {}, "bias").value()[0];
  const TensorId y = g.add_node("Linear", {h, w2}).value()[0];
  REQUIRE(g.mark_output(g.add_node("ReduceSum", {y}, Attrs{{"keepdims", int64_t{0}}}).value()[0], "y").is_ok());
  const TrainingProgram program = build_training_program(g, recipe("bf16"));
  CHECK(output_dtype(program, node_named(train_of(program), "train/bias")) == DType::kBF16);
  const Recipe bf16 = recipe("bf16");
  auto blob = compile(g, &bf16);
  REQUIRE(blob.is_ok());
  const std::vector<float> xs = random_floats(kRows * kWidth, 43, -2.0f, 2.0f);
  check_cpu_step_follows_ref(blob->data(), blob->size(), xs, "b", random_floats(kHidden, 10), 1e-4);
}
