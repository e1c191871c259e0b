// Recipe precision "bf16": the compiler converts each activation that bf16 GEMMs read once, with
// one Cast shared by all of them (src/compiler/lowering/bf16_operands.hpp):
//   - h, read by the q, k and v projections and by their three weight gradients, has one Cast,
//     and the dy that the three input and three weight gradients share has one more;
//   - no bf16 GEMM reads an f32 activation; weights stay f32 (their copies are the kernels');
//   - the backward starts where it did; the fp32 recipe, or a compile for cuda, inserts nothing;
//   - h is saved for the backward in bf16: the saved activations shrink by half its f32 bytes;
//   - a step trains on cpu and on ref, to the same loss within bf16 rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "support/engine_parameter.hpp"
#include "support/op_runner.hpp"
#include "support/training_program.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int64_t kRows = 12, kWidth = 16;

// loss = sum(Linear(h, wq) + Linear(h, wk) + Linear(h, wv)), h = Relu(x): h is read by three GEMMs
// (the shape of attention's projections over one LayerNorm output).
Graph build_qkv() {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {kRows, kWidth});
  const TensorId h = g.add_node("Relu", {x}, {}, "norm", {"h"}).value()[0];
  TensorId sum = kNoTensor;
  uint32_t seed = 1;
  for (const char* name : {"wq", "wk", "wv"}) {
    const TensorId w = g.add_parameter_f32(name, {kWidth, kWidth}, random_floats(kWidth * kWidth, ++seed));
    const TensorId y = g.add_node("Linear", {h, w}).value()[0];
    sum = sum == kNoTensor ? y : g.add_node("Add", {sum, y}).value()[0];
  }
  const TensorId loss = g.add_node("ReduceSum", {sum}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  REQUIRE(g.mark_output(loss, "y").is_ok());
  return g;
}

Recipe recipe(const char* precision) { return sgd_on_output_recipe(precision); }

TrainingProgram build(const Graph& g, const char* precision) { return build_training_program(g, recipe(precision)); }

bool is_gemm(const Node& n) {
  return n.op == "Linear" || n.op == "MatMul" || n.op == "LinearInputGrad" || n.op == "LinearWeightGrad";
}

}  // namespace

TEST_CASE("bf16: one Cast per activation, shared by every GEMM that reads it", "[compiler][bf16]") {
  const Graph model = build_qkv();
  const TrainingProgram program = build(model, "bf16");
  const Graph& g = program.graph;
  const FunctionDef* train = nullptr;
  for (const FunctionDef& f : program.functions) {
    if (f.name == "train") train = &f;
  }
  REQUIRE(train != nullptr);
  std::map<TensorId, int> readers_of_cast;  // a Cast's output -> GEMMs reading it
  std::map<TensorId, TensorId> cast_source;
  for (const Node& n : train->nodes) {
    if (n.op != "Cast") continue;
    REQUIRE(n.inputs.size() == 1);
    CHECK(g.tensor(n.outputs[0]).dtype == DType::kBF16);
    CHECK(cast_source.count(n.inputs[0]) == 0);  // one Cast per source
    cast_source[n.inputs[0]] = n.outputs[0];
  }
  int gemms = 0;
  for (const Node& n : train->nodes) {
    if (!is_gemm(n)) continue;
    ++gemms;
    for (TensorId in : n.inputs) {
      if (in == kNoTensor) continue;
      const TensorDesc& t = g.tensor(in);
      INFO(n.op << " reads " << t.name);
      if (t.kind == TensorKind::kParameter) {
        CHECK(t.dtype == DType::kF32);
        continue;
      }
      CHECK(t.dtype == DType::kBF16);
      ++readers_of_cast[in];
    }
  }
  CHECK(gemms == 6);  // 3 forward Linears and 3 LinearWeightGrads (x needs no gradient: no input gradient)
  const TensorId h = g.find("train/h");  // the train function's clone of the forward
  REQUIRE(h != kNoTensor);
  REQUIRE(cast_source.count(h) == 1);
  CHECK(readers_of_cast[cast_source[h]] == 6);  // q, k, v and their weight gradients
  // The other Casts convert the weight gradients' dy: 1 to 3 of them, as the Adds' gradients share it.
  CHECK(cast_source.size() >= 2);
  CHECK(cast_source.size() <= 4);

  // The backward begins where it did: the nodes before it are the fp32 build's forward plus Casts.
  const TrainingProgram fp32 = build(model, "fp32");
  const FunctionDef* fp32_train = nullptr;
  for (const FunctionDef& f : fp32.functions) {
    if (f.name == "train") fp32_train = &f;
    for (const Node& n : f.nodes) CHECK(n.op != "Cast");
  }
  REQUIRE(fp32_train != nullptr);
  int forward_casts = 0;
  for (int32_t i = 0; i < train->backward_begin; ++i) forward_casts += train->nodes[static_cast<size_t>(i)].op == "Cast";
  CHECK(forward_casts == 1);
  CHECK(train->backward_begin == fp32_train->backward_begin + forward_casts);

  // Compiled for another backend (cuda's GEMMs round f32 storage themselves): no copies.
  CompileOptions for_cuda;
  for_cuda.backend = "cuda";
  for (const FunctionDef& f : build_training_program(model, recipe("bf16"), for_cuda).functions) {
    for (const Node& n : f.nodes) CHECK(n.op != "Cast");
  }
}

TEST_CASE("bf16: an activation saved only for GEMMs is saved in bf16, and cpu trains as ref does", "[compiler][bf16]") {
  const Graph model = build_qkv();
  CompileReport fp32_report, bf16_report;
  const Recipe fp32 = recipe("fp32"), bf16 = recipe("bf16");
  REQUIRE(compile(model, &fp32, {}, &fp32_report).is_ok());
  auto blob = compile(model, &bf16, {}, &bf16_report);
  REQUIRE(blob.is_ok());
  // h [rows, width] is the one saved activation: f32 in the fp32 step, bf16 in the bf16 step.
  CHECK(fp32_report.saved_activation_bytes == kRows * kWidth * 4);
  CHECK(bf16_report.saved_activation_bytes == kRows * kWidth * 2);

  const std::vector<float> x = random_floats(kRows * kWidth, 40);
  check_cpu_step_follows_ref(blob->data(), blob->size(), x, "wq", random_floats(kWidth * kWidth, 2), 1e-5);
}
