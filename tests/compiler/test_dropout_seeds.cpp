// The seeds that the train-mode lowering gives Dropout nodes without one (src/compiler/lowering/
// train_mode.cpp): a hash of the node's name, so that a node added before them (as compiler
// passes and model edits do) leaves every mask as it was, and two Dropouts never share a mask.
#include <catch2/catch.hpp>

#include <map>

#include "small_cnn.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int64_t kBatch = 4, kFeatures = 16;

// x -> [Relu when `extra_node`] -> drop_a -> fc1 -> drop_b -> fc -> logits
Graph build_mlp(bool extra_node) {
  ModelBuilder b;
  TensorId h = b.input("x", DType::kF32, {kBatch, kFeatures});
  if (extra_node) h = b.relu(h);
  h = b.named("drop_a").dropout(h, 0.5);
  h = b.named("fc1").linear(h, b.parameter_kaiming_uniform("fc1.weight", {kFeatures, kFeatures}, 1));
  h = b.named("drop_b").dropout(h, 0.5);
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kCnnClasses, kFeatures}, 2)), "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// The seed of each DropoutTrain op of the train function, by the model node it came from.
std::map<std::string, int64_t> dropout_seeds(const Graph& g) {
  const Recipe recipe = full_bp_recipe();
  const ProgramSpec spec = spec_of(compile_or_fail(g, &recipe, {}));
  const FunctionSpec* train = find_function(spec, "train");
  REQUIRE(train != nullptr);
  std::map<std::string, int64_t> seeds;
  for (uint32_t i : train->ops) {
    const OpSpec& op = spec.ops[i];
    if (op.op != "DropoutTrain") continue;
    const std::string node = op.name.find("drop_a") != std::string::npos ? "drop_a" : "drop_b";
    REQUIRE(op.attrs.has("seed"));
    seeds[node] = op.attrs.get_int("seed", -1);
  }
  return seeds;
}

}  // namespace

TEST_CASE("Dropout seeds follow node names, not positions", "[passes][train]") {
  const auto seeds = dropout_seeds(build_mlp(false));
  const auto shifted = dropout_seeds(build_mlp(true));
  REQUIRE(seeds.size() == 2);
  REQUIRE(shifted.size() == 2);
  CHECK(seeds.at("drop_a") != seeds.at("drop_b"));
  CHECK(seeds.at("drop_a") >= 0);
  CHECK(seeds.at("drop_b") >= 0);
  // The Relu before them moves both Dropouts one place on in the model's node list.
  CHECK(shifted.at("drop_a") == seeds.at("drop_a"));
  CHECK(shifted.at("drop_b") == seeds.at("drop_b"));
}
