// The memory-aware schedule: it must never raise the arena that emit.cpp plans (the independent
// measure: the blob's per-function arena_bytes with CompileOptions::memory_schedule off), must lower it
// where the given order is wasteful, must keep the orderings in-place mutation imposes, and must
// not change any value.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>

#include "compiler/passes/schedule_deps.hpp"
#include "ir/op_schema.hpp"
#include "small_cnn.hpp"
#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

CompileOptions with_schedule(bool on) {
  CompileOptions o;
  o.memory_schedule = on;
  return o;
}

// Four branches x -> ScaleShift -> Expand to [64, 1024] -> ReduceSum back to [1, 1024], built
// breadth first: every big Expand output is alive at once unless the schedule interleaves them.
Graph build_wide_branches() {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {1, 1024});
  std::vector<TensorId> scaled, big, small;
  for (int i = 0; i < 4; ++i) scaled.push_back(b.scale_shift(x, i + 1.0));
  for (TensorId s : scaled) big.push_back(b.expand(s, {64, 1024}));
  for (TensorId t : big) small.push_back(b.reduce_sum(t, {0}, true));
  TensorId y = small[0];
  for (int i = 1; i < 4; ++i) y = b.add(y, small[static_cast<size_t>(i)]);
  b.output(y, "y");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

bool reads(const OpSpec& op, int32_t tensor) {
  return std::find(op.inputs.begin(), op.inputs.end(), tensor) != op.inputs.end();
}

std::vector<int32_t> mutated_by(const OpSpec& op) {
  std::vector<int32_t> out;
  const OpSchema* schema = SchemaRegistry::global().find(op.op);
  if (!schema) return out;
  for (int i : schema->mutated_inputs) {
    if (i < static_cast<int>(op.inputs.size()) && op.inputs[static_cast<size_t>(i)] >= 0) {
      out.push_back(op.inputs[static_cast<size_t>(i)]);
    }
  }
  return out;
}

bool is_update(const OpSpec& op) { return op.op == "SgdUpdate" || op.op == "AdamUpdate"; }

}  // namespace

TEST_CASE("the schedule lowers the planned peak of a breadth-first graph", "[passes][schedule]") {
  const Graph g = build_wide_branches();
  const std::vector<uint8_t> scheduled = compile_or_fail(g, nullptr, with_schedule(true));
  const std::vector<uint8_t> given = compile_or_fail(g, nullptr, with_schedule(false));
  const uint64_t before = spec_of(given).functions[0].arena_bytes;
  const uint64_t after = spec_of(scheduled).functions[0].arena_bytes;
  INFO("arena " << before << " -> " << after << " bytes");
  // Given order: four [64, 1024] f32 buffers (256 KiB each) live together. Scheduled: one at a time.
  CHECK(before >= 4 * 256 * 1024);
  CHECK(after < 2 * 256 * 1024);

  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> want;
  for (float v : x) want.push_back(640.0f * v);  // sum over i of 64 * (i + 1) * x
  for (const std::vector<uint8_t>* blob : {&scheduled, &given}) {
    Engine e = open_engine(*blob, "ref");
    REQUIRE(e.set_input("x", x).is_ok());
    REQUIRE(e.infer().is_ok());
    CHECK(e.output<float>("y").value() == want);
  }
}

TEST_CASE("the schedule never raises a function's planned peak and changes no value", "[passes][schedule]") {
  const Graph cnn = build_small_cnn();
  Recipe accumulate = full_bp_recipe();
  accumulate.grad_accumulation = 2;
  accumulate.clip_grad_norm = 1.0;
  accumulate.optimizer.type = "adam";
  accumulate.optimizer.momentum = 0.0;
  const Recipe full = full_bp_recipe(), frozen = frozen_backbone_recipe();
  const struct {
    const char* name;
    const Recipe* recipe;
  } cases[] = {{"inference only", nullptr}, {"full BP", &full}, {"frozen backbone", &frozen},
               {"adam, accumulation, clipping", &accumulate}};
  for (const auto& c : cases) {
    INFO(c.name);
    const std::vector<uint8_t> scheduled = compile_or_fail(cnn, c.recipe, with_schedule(true));
    const std::vector<uint8_t> given = compile_or_fail(cnn, c.recipe, with_schedule(false));
    const ProgramSpec a = spec_of(scheduled), b = spec_of(given);
    REQUIRE(a.functions.size() == b.functions.size());
    for (size_t f = 0; f < a.functions.size(); ++f) {
      INFO(a.functions[f].name << ": " << b.functions[f].arena_bytes << " -> " << a.functions[f].arena_bytes);
      CHECK(a.functions[f].arena_bytes <= b.functions[f].arena_bytes);
    }
    Engine x = open_engine(scheduled, "ref");
    Engine y = open_engine(given, "ref");
    CHECK(infer_logits(x, cnn_batch(0)) == infer_logits(y, cnn_batch(0)));
    if (!c.recipe) continue;
    for (uint32_t step = 0; step < 4; ++step) CHECK(train_once(x, cnn_batch(step)) == train_once(y, cnn_batch(step)));
    for (const char* p : {"fc1.weight", "fc2.bias"}) CHECK(parameter(x, p) == parameter(y, p));
    CHECK(infer_logits(x, cnn_batch(9)) == infer_logits(y, cnn_batch(9)));
  }
}

namespace {

// For every tensor some op writes in place, and every op of the train function that touches it:
// "op name -> how many writes of the tensor precede it (and whether it writes)". Two orders that
// agree on this read and write the same values.
std::map<std::string, std::map<std::string, std::pair<int, bool>>> mutation_epochs(const ProgramSpec& spec) {
  const FunctionSpec* train = find_function(spec, "train");
  REQUIRE(train != nullptr);
  std::map<std::string, std::map<std::string, std::pair<int, bool>>> epochs;
  std::map<int32_t, int> writes_so_far;
  for (uint32_t i : train->ops) {
    for (int32_t t : mutated_by(spec.ops[i])) writes_so_far.try_emplace(t, 0);
  }
  for (uint32_t i : train->ops) {
    const OpSpec& op = spec.ops[i];
    const std::vector<int32_t> written = mutated_by(op);
    for (auto& [t, writes] : writes_so_far) {
      if (!reads(op, t)) continue;
      const bool writes_it = std::find(written.begin(), written.end(), t) != written.end();
      epochs[spec.tensors[static_cast<size_t>(t)].name][op.name] = {writes, writes_it};
      writes += writes_it;
    }
  }
  return epochs;
}

}  // namespace

TEST_CASE("scheduled updates keep the in-place orderings and run as early as possible", "[passes][schedule]") {
  const Graph cnn = build_small_cnn();
  Recipe accumulate = full_bp_recipe();
  accumulate.grad_accumulation = 2;
  accumulate.clip_grad_norm = 1.0;
  for (const Recipe& recipe : {accumulate, full_bp_recipe()}) {
    INFO("grad_accumulation " << recipe.grad_accumulation);
    const ProgramSpec spec = spec_of(compile_or_fail(cnn, &recipe, with_schedule(true)));
    CHECK(mutation_epochs(spec) == mutation_epochs(spec_of(compile_or_fail(cnn, &recipe, with_schedule(false)))));
    const FunctionSpec* train = find_function(spec, "train");
    REQUIRE(train != nullptr);
    size_t updates = 0;
    for (size_t k = 0; k < train->ops.size(); ++k) {
      const OpSpec& op = spec.ops[train->ops[k]];
      if (!is_update(op)) continue;
      ++updates;
      // As early as possible: right after the op that was its last dependency (or another update).
      REQUIRE(k > 0);
      const OpSpec& prev = spec.ops[train->ops[k - 1]];
      bool depends = is_update(prev);
      for (int32_t out : prev.outputs) depends = depends || reads(op, out);
      for (int32_t t : mutated_by(op)) depends = depends || reads(prev, t);
      INFO(op.name << " follows " << prev.op << " '" << prev.name << "'");
      CHECK(depends);
    }
    CHECK(updates == 13);  // every parameter of the CNN trains
  }
}

TEST_CASE("without update reordering, the schedule leaves updates at the end", "[passes][schedule]") {
  const Recipe recipe = full_bp_recipe();
  CompileOptions options;
  options.reorder_updates = false;
  const ProgramSpec spec = spec_of(compile_or_fail(build_small_cnn(), &recipe, options));
  const FunctionSpec* train = find_function(spec, "train");
  REQUIRE(train != nullptr);
  bool seen_update = false;
  for (uint32_t i : train->ops) {
    const bool update = is_update(spec.ops[i]);
    CHECK((!seen_update || update));
    seen_update = seen_update || update;
  }
  CHECK(seen_update);
}

TEST_CASE("in-place writers order their readers", "[passes][schedule]") {
  // r1 reads S, then AccumulateGrad writes S, then r2 reads the new S; two more writers of S.
  Graph g;
  const TensorId s = g.add_tensor(TensorDesc{"S", DType::kF32, {8}, TensorKind::kState});
  const TensorId grad = g.add_input("g", DType::kF32, {8});
  std::vector<Node> nodes;
  auto node = [&](const char* op, std::vector<TensorId> inputs) {
    auto n = g.create_node(op, std::move(inputs));
    REQUIRE(n.is_ok());
    nodes.push_back(n.value());
    return n->outputs.empty() ? kNoTensor : n->outputs[0];
  };
  node("Neg", {s});                   // 0: reads the old S
  node("AccumulateGrad", {s, grad});  // 1: writes S
  node("Exp", {s});                   // 2: reads the new S
  node("Abs", {s});                   // 3: reads the new S
  node("AccumulateGrad", {s, grad});  // 4: writes S again
  const NodeDeps deps = node_dependencies(nodes);
  auto has_edge = [&](size_t from, size_t to) {
    return std::find(deps.successors[from].begin(), deps.successors[from].end(), to) != deps.successors[from].end();
  };
  CHECK(has_edge(0, 1));
  CHECK(has_edge(1, 2));
  CHECK(has_edge(1, 3));
  CHECK(has_edge(2, 4));
  CHECK(has_edge(3, 4));
  CHECK(has_edge(1, 4));
  CHECK_FALSE(has_edge(2, 3));  // readers of one value may run in either order
  CHECK(deps.predecessors[0] == 0);
}
