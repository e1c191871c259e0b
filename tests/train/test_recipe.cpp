// Recipes: every field parses; unknown fields, wrong types and bad values are errors naming the
// field path; selection errors at compile time name the rule.
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// The error of parsing `json`; fails the test if it parses.
std::string parse_error(const std::string& json) {
  auto r = parse_recipe(json);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  return r.status().message();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("every recipe field parses", "[train][recipe]") {
  auto r = parse_recipe(R"({
    "batch_size": 8,
    "loss": {"type": "cross_entropy", "logits": "out", "labels": "y", "ignore_index": -1, "label_smoothing": 0.1},
    "optimizer": {"type": "sgd", "lr": 0.5, "momentum": 0.9, "nesterov": true, "weight_decay": 0.01,
                  "beta1": 0.8, "beta2": 0.9, "eps": 1e-6},
    "schedule": {"type": "cosine", "warmup_steps": 10, "total_steps": 100, "min_lr": 0.001},
    "grad_accumulation": 4,
    "clip_grad_norm": 1.5,
    "trainable": [{"match": "*.bias"}, {"layers": "last:2", "bias_only": true}, {"match": "fc.*", "channels": 0.25},
                  {"match": "conv.*", "channels": 8}],
    "freeze_batchnorm_stats": true
  })");
  REQUIRE(r.is_ok());
  CHECK(r->batch_size == 8);
  CHECK(r->loss.type == "cross_entropy");
  CHECK(r->loss.logits == "out");
  CHECK(r->loss.labels == "y");
  CHECK(r->loss.ignore_index == -1);
  CHECK(r->loss.label_smoothing == 0.1);
  CHECK(r->optimizer.type == "sgd");
  CHECK(r->optimizer.lr == 0.5);
  CHECK(r->optimizer.momentum == 0.9);
  CHECK(r->optimizer.nesterov);
  CHECK(r->optimizer.weight_decay == 0.01);
  CHECK(r->optimizer.beta1 == 0.8);
  CHECK(r->optimizer.beta2 == 0.9);
  CHECK(r->optimizer.eps == 1e-6);
  CHECK(r->schedule.type == "cosine");
  CHECK(r->schedule.warmup_steps == 10);
  CHECK(r->schedule.total_steps == 100);
  CHECK(r->schedule.min_lr == 0.001);
  CHECK(r->grad_accumulation == 4);
  CHECK(r->clip_grad_norm == 1.5);
  REQUIRE(r->trainable.size() == 4);
  CHECK(r->trainable[0].match == "*.bias");
  CHECK(r->trainable[1].layers == "last:2");
  CHECK(r->trainable[1].bias_only);
  CHECK(r->trainable[2].channel_ratio == 0.25);
  CHECK(r->trainable[3].channels == 8);
  CHECK(r->freeze_batchnorm_stats);
}

TEST_CASE("an empty recipe gives the documented defaults", "[train][recipe]") {
  auto r = parse_recipe("{}");
  REQUIRE(r.is_ok());
  const Recipe d;
  CHECK(r->loss.type == d.loss.type);
  CHECK(r->optimizer.type == "sgd");
  CHECK(r->optimizer.lr == d.optimizer.lr);
  CHECK(r->grad_accumulation == 1);
  CHECK(r->trainable.empty());
}

TEST_CASE("recipe errors name the field", "[train][recipe]") {
  CHECK(contains(parse_error(R"({"batch_sise": 8})"), "'batch_sise'"));
  CHECK(contains(parse_error(R"({"optimizer": {"lrr": 0.1}})"), "'optimizer.lrr': unknown field"));
  CHECK(contains(parse_error(R"({"batch_size": "8"})"), "'batch_size': expected an integer"));
  CHECK(contains(parse_error(R"({"batch_size": 8.5})"), "'batch_size'"));
  CHECK(contains(parse_error(R"({"optimizer": {"lr": "fast"}})"), "'optimizer.lr': expected a number"));
  CHECK(contains(parse_error(R"({"optimizer": {"nesterov": 1}})"), "'optimizer.nesterov'"));
  CHECK(contains(parse_error(R"({"optimizer": {"type": "adam", "beta2": 1.5}})"), "'optimizer.beta2'"));
  CHECK(contains(parse_error(R"({"optimizer": {"type": "lion"}})"), "'optimizer.type'"));
  CHECK(contains(parse_error(R"({"optimizer": {"lr": -1}})"), "'optimizer.lr'"));
  CHECK(contains(parse_error(R"({"optimizer": {"nesterov": true}})"), "'optimizer.nesterov'"));
  CHECK(contains(parse_error(R"({"loss": {"type": "hinge"}})"), "'loss.type'"));
  CHECK(contains(parse_error(R"({"loss": {"label_smoothing": 1.0}})"), "'loss.label_smoothing'"));
  CHECK(contains(parse_error(R"({"loss": []})"), "'loss': expected an object"));
  CHECK(contains(parse_error(R"({"schedule": {"type": "cosine", "warmup_steps": 10}})"), "'schedule.total_steps'"));
  CHECK(contains(parse_error(R"({"schedule": {"type": "linear_warmup"}})"), "'schedule.warmup_steps'"));
  CHECK(contains(parse_error(R"({"grad_accumulation": 0})"), "'grad_accumulation'"));
  CHECK(contains(parse_error(R"({"clip_grad_norm": -1})"), "'clip_grad_norm'"));
  CHECK(contains(parse_error(R"({"trainable": {"match": "*"}})"), "'trainable': expected an array"));
  CHECK(contains(parse_error(R"({"trainable": [{"match": "*", "chanels": 2}]})"), "'trainable[0].chanels'"));
  CHECK(contains(parse_error(R"({"trainable": [{"match": "a"}, {"channels": 1.5, "match": "b"}]})"), "'trainable[1].channels'"));
  CHECK(contains(parse_error(R"({"trainable": [{}]})"), "'trainable[0]'"));
  // -1 is the parser's "not given": written in the file it is a bad count, not an absent one.
  CHECK(contains(parse_error(R"({"trainable": [{"match": "a", "channels": -1}]})"), "'trainable[0].channels': a count must be >= 1"));
  CHECK(contains(parse_error(R"({"trainable": [{"match": "a", "channels": 0}]})"), "'trainable[0].channels'"));
  CHECK(contains(parse_error(R"({"trainable": [{"match": "a", "channel_ratio": -1}]})"), "'trainable[0].channel_ratio'"));
  CHECK(contains(parse_error(R"({"trainable": [{"match": "a", "channels": -0.5}]})"), "'trainable[0].channels'"));
  CHECK(contains(parse_error(R"({"freeze_batchnorm_stats": "yes"})"), "'freeze_batchnorm_stats'"));
  CHECK(contains(parse_error("{not json"), "not valid JSON"));
  CHECK(contains(parse_error("[1, 2]"), "JSON object"));
}

TEST_CASE("load_recipe reads a file and names it in errors", "[train][recipe]") {
  const std::string path = "test_recipe.json";
  {
    std::ofstream f(path);
    f << R"({"optimizer": {"type": "adamw", "lr": 0.001}})";
  }
  auto r = load_recipe(path);
  REQUIRE(r.is_ok());
  CHECK(r->optimizer.type == "adamw");
  {
    std::ofstream f(path);
    f << R"({"optimizer": {"type": "adamw", "lr": 0.001, "betas": [0.9, 0.99]}})";
  }
  auto bad = load_recipe(path);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(contains(bad.status().message(), path));
  CHECK(contains(bad.status().message(), "'optimizer.betas'"));
  std::remove(path.c_str());
  auto missing = load_recipe("no/such/recipe.json");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kIo);
}

TEST_CASE("trainable globs select parameters by name; the rest stay frozen", "[train][recipe]") {
  Recipe r = classifier_recipe();
  r.trainable = {TrainableRule{"*.bias"}, TrainableRule{"fc2.*"}};
  auto trainer = compile_trainer(build_mlp(), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  auto read = [&](const char* name) {
    auto info = e.info(name);
    REQUIRE(info.is_ok());
    std::vector<float> v(info->nbytes / 4);
    REQUIRE(e.get_parameter(name, v.data(), info->nbytes).is_ok());
    return v;
  };
  const auto w1 = read("fc1.weight"), b1 = read("fc1.bias"), w2 = read("fc2.weight");
  REQUIRE(feed(e, make_batch(0)).is_ok());
  REQUIRE(e.train_step().is_ok());
  CHECK(read("fc1.weight") == w1);  // frozen
  CHECK(read("fc1.bias") != b1);    // selected by "*.bias"
  CHECK(read("fc2.weight") != w2);  // selected by "fc2.*"
  // A frozen weight lives in the read-only weights section.
  CHECK(e.set_parameter("fc1.weight", w1.data(), w1.size() * 4).code() == Code::kInvalidArgument);
}

TEST_CASE("selection errors name the rule", "[train][recipe]") {
  const Graph model = build_mlp();
  Recipe r = classifier_recipe();
  r.trainable = {TrainableRule{"*.bias"}, TrainableRule{"encoder.*"}};
  auto blob = compile(model, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "trainable[1]"));
  CHECK(contains(blob.status().message(), "'encoder.*'"));

  auto unsupported = parse_recipe(R"({"trainable": [{"layers": "last:5"}]})");  // the MLP has 2 layers
  REQUIRE(unsupported.is_ok());
  Recipe u = unsupported.value();
  u.loss.logits = "logits";
  blob = compile(model, &u);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "trainable[0].layers"));
}

TEST_CASE("loss wiring errors name the tensor", "[train][recipe]") {
  const Graph model = build_mlp();
  Recipe r = classifier_recipe();
  r.loss.logits = "nope";
  auto blob = compile(model, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "'nope'"));

  r = classifier_recipe();
  r.loss.labels = "x";  // the model's input is f32 [16, 4], not labels
  blob = compile(model, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "loss.labels"));

  r = classifier_recipe();
  r.loss.type = "output";  // logits are not a scalar
  blob = compile(model, &r);
  REQUIRE_FALSE(blob.is_ok());
  CHECK(contains(blob.status().message(), "'output'"));
}

TEST_CASE("batch_size recompiles the model's shapes", "[train][recipe]") {
  Recipe r = classifier_recipe();
  r.batch_size = 5;
  auto trainer = compile_trainer(build_mlp(), r);
  REQUIRE(trainer.is_ok());
  auto info = trainer->engine.info("x");
  REQUIRE(info.is_ok());
  CHECK(info->dims[0] == 5);
  auto label = trainer->engine.info("label");
  REQUIRE(label.is_ok());
  CHECK(label->dims[0] == 5);
}
