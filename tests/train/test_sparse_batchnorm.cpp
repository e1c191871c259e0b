// freeze_batchnorm_stats under sparse-BP schemes, per layer: the BatchNorm of a frozen conv+BN
// layer (neither its scale nor the feeding conv's weight trains; its shift may, as in bias-only)
// runs in inference form and keeps its running statistics; the BatchNorm of a layer whose
// weights train keeps batch statistics and updates them.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "blob/reader.hpp"
#include "train/sparse_models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

int train_form_batchnorms(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  int n = 0;
  for (const FunctionSpec& f : spec->functions) {
    if (f.name != "train") continue;
    for (uint32_t index : f.ops) n += spec->ops[index].op == "BatchNormTrain";
  }
  return n;
}

struct StepResult {
  int train_form = 0;                   // BatchNormTrain ops in the train function
  std::map<std::string, bool> changed;  // watched tensor -> differs after two SGD steps
};

StepResult run(std::vector<TrainableRule> rules, bool freeze, const std::vector<std::string>& watched) {
  auto g = build_sparse_cnn();
  REQUIRE(g.is_ok());
  Recipe r = gradient_recipe(std::move(rules));
  r.optimizer.lr = 0.1;
  r.freeze_batchnorm_stats = freeze;
  // The frozen BatchNorms stay as they are, so that their statistics can be read back: with
  // fold_frozen_scales they would become constants of the folded convolutions (and leave the blob).
  CompileOptions options;
  options.fold_frozen_scales = false;
  auto blob = compile(g.value(), &r, options);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  StepResult out;
  out.train_form = train_form_batchnorms(blob.value());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  Engine& e = engine.value();
  // Running statistics in train form became state (read as outputs); frozen ones stay parameters.
  auto read = [&](const std::string& name) {
    auto v = read_floats(e, name, true);
    if (!v.is_ok()) v = read_floats(e, name, false);
    INFO(name << ": " << v.status().to_string());
    REQUIRE(v.is_ok());
    return v.value();
  };
  std::map<std::string, std::vector<float>> before;
  for (const std::string& t : watched) before[t] = read(t);
  for (uint32_t step = 0; step < 2; ++step) {
    const CnnBatch b = make_cnn_batch(40 + step);
    REQUIRE(e.set_input("image", b.image).is_ok());
    REQUIRE(e.set_input("label", b.label).is_ok());
    auto loss = e.train_step();
    INFO(loss.status().to_string());
    REQUIRE(loss.is_ok());
  }
  for (const std::string& t : watched) out.changed[t] = read(t) != before[t];
  return out;
}

const std::vector<std::string> kWatched{"bn0.running_mean", "bn0.running_var", "bn0.bias",
                                        "bn1.running_mean", "bn1.running_var", "bn1.bias"};

}  // namespace

TEST_CASE("bias-only with frozen BatchNorm statistics: every BN in inference form, shifts train", "[train][sparse]") {
  const StepResult s = run({rule_bias_only()}, true, kWatched);
  CHECK(s.train_form == 0);
  CHECK_FALSE(s.changed.at("bn0.running_mean"));
  CHECK_FALSE(s.changed.at("bn0.running_var"));
  CHECK_FALSE(s.changed.at("bn1.running_mean"));
  CHECK_FALSE(s.changed.at("bn1.running_var"));
  CHECK(s.changed.at("bn0.bias"));
  CHECK(s.changed.at("bn1.bias"));
}

TEST_CASE("a BN whose conv weight trains keeps batch statistics; frozen layers' BNs do not", "[train][sparse]") {
  // conv1's weight (partially) trains: bn1 (fed by conv1) trains in batch-statistics form, bn0 is
  // a frozen layer's BN.
  StepResult s = run({rule_bias_only(), rule_ratio("conv1.weight", 0.5)}, true, kWatched);
  CHECK(s.train_form == 1);
  CHECK_FALSE(s.changed.at("bn0.running_mean"));
  CHECK(s.changed.at("bn1.running_mean"));
  CHECK(s.changed.at("bn1.running_var"));
  // A trained BN scale makes its own layer train; the one train-form BN is bn0, whose statistics
  // move. (bn1 is then entirely frozen, and the passes may fold its statistics away.)
  s = run({rule_match("bn0.weight")}, true, {"bn0.running_mean"});
  CHECK(s.train_form == 1);
  CHECK(s.changed.at("bn0.running_mean"));
}

TEST_CASE("without freeze_batchnorm_stats every BN uses batch statistics", "[train][sparse]") {
  const StepResult s = run({rule_bias_only()}, false, kWatched);
  CHECK(s.train_form == 2);
  CHECK(s.changed.at("bn0.running_mean"));
  CHECK(s.changed.at("bn1.running_mean"));
}
