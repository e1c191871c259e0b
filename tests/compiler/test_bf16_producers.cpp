// Recipe precision "bf16": a GELU or Transpose whose output only a bf16 GEMM operand copy reads
// writes that copy itself (src/compiler/lowering/bf16_producers.hpp):
//   - in the MLP x -> Linear -> Gelu -> Linear, the Gelu writes bf16 (output_dtype) and the down
//     projection and its weight gradient read it; no Cast of it is left, nor its f32 original;
//   - a GELU output read by anything else keeps its f32 output and its Cast;
//   - the fp32 recipe, and a compile for cuda, leave every Gelu f32;
//   - attention's head splits: the Transposes of q and k write the bf16 operands of q kᵀ;
//   - a step on cpu gives the weights ref gives, within bf16 rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/passes/rewrite_util.hpp"
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
