// A NaN in the data fails the step with a numerical error and leaves every parameter and every
// optimizer state as it was; training then continues normally.
#include <cmath>
#include <cstring>
#include <limits>

#include <catch2/catch.hpp>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::vector<uint8_t> parameter_bytes(Engine& e) {
  std::vector<uint8_t> out;
  for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
    auto info = e.info(name);
    REQUIRE(info.is_ok());
    std::vector<uint8_t> v(info->nbytes);
    REQUIRE(e.get_parameter(name, v.data(), v.size()).is_ok());
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// After 3 good steps and a failed one, step 4 on batch 3 gives what an engine that never failed
// has after batches 0-3: the failure changed nothing, optimizer state included.
void check_next_step_as_if_never_failed(Engine& e, const Recipe& r, const CompileOptions& options = {}) {
  auto twin = compile_trainer(build_mlp(), r, options);
  REQUIRE(twin.is_ok());
  for (int s = 0; s < 4; ++s) {
    REQUIRE(feed(twin->engine, make_batch(s)).is_ok());
    REQUIRE(twin->engine.train_step().is_ok());
  }
  REQUIRE(feed(e, make_batch(3)).is_ok());
  REQUIRE(e.train_step().is_ok());
  CHECK(parameter_bytes(e) == parameter_bytes(twin->engine));
}

}  // namespace

TEST_CASE("a NaN in the batch gives a numerical error and keeps every parameter", "[train][numerical]") {
  Recipe r = classifier_recipe();
  r.optimizer.weight_decay = 0.01;
  auto trainer = compile_trainer(build_mlp(), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  for (int s = 0; s < 3; ++s) {  // some optimizer state first, so that its rollback matters too
    REQUIRE(feed(e, make_batch(s)).is_ok());
    REQUIRE(e.train_step().is_ok());
  }
  const std::vector<uint8_t> before = parameter_bytes(e);
  const int64_t step = e.step();

  Batch bad = make_batch(3);
  bad.x[5] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(feed(e, bad).is_ok());
  auto failed = e.train_step();
  REQUIRE_FALSE(failed.is_ok());
  CHECK(failed.status().code() == Code::kNumerical);
  CHECK(parameter_bytes(e) == before);
  CHECK(e.step() == step);

  // The same clean batch then trains exactly like an engine that never saw the NaN.
  check_next_step_as_if_never_failed(e, r);
}

TEST_CASE("a failed step restores the trained rows of a partial-channel weight", "[train][numerical]") {
  // The rollback snapshot holds only what a step can write: for fc1.weight trained on half its
  // output channels, the leading rows. Those rows and their optimizer state must come back.
  Recipe r = classifier_recipe();
  r.optimizer.type = "sgd";
  r.optimizer.momentum = 0.9;
  r.trainable = {TrainableRule{.match = "fc1.weight", .channel_ratio = 0.5}, TrainableRule{.match = "fc2.*"}};
  auto trainer = compile_trainer(build_mlp(), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  const std::vector<uint8_t> initial = parameter_bytes(e);
  for (int s = 0; s < 3; ++s) {
    REQUIRE(feed(e, make_batch(s)).is_ok());
    REQUIRE(e.train_step().is_ok());
  }
  const std::vector<uint8_t> before = parameter_bytes(e);
  REQUIRE(before != initial);  // the trained rows moved, so restoring them is a real check

  Batch bad = make_batch(3);
  bad.x[0] = std::numeric_limits<float>::infinity();
  REQUIRE(feed(e, bad).is_ok());
  auto failed = e.train_step();
  REQUIRE_FALSE(failed.is_ok());
  CHECK(failed.status().code() == Code::kNumerical);
  CHECK(parameter_bytes(e) == before);

  // And the next clean step matches an engine that never failed (momentum restored too).
  check_next_step_as_if_never_failed(e, r);
}

// With the updates last in the step (compile option reorder_updates off: pockc --no-reorder) and
// on host backends, the step checks every gradient before any update, so a failure leaves the
// weights and the optimizer state exactly as they were without a copy of them: a NaN, and a
// finite batch whose gradients pass 1e15 (inputs scaled by 1e18; SGD's first steps keep the
// hidden units alive, so the gradient is that large).
TEST_CASE("updates after the backward: bad gradients fail the step before any update", "[train][numerical]") {
  CompileOptions deferred;
  deferred.reorder_updates = false;
  for (const char* optimizer : {"sgd", "adam"}) {
    for (const bool nan : {true, false}) {
      if (!nan && std::string(optimizer) == "adam") continue;
      INFO(optimizer << (nan ? " NaN" : " 1e18 inputs"));
      Recipe r = classifier_recipe();
      r.optimizer.type = optimizer;
      auto trainer = compile_trainer(build_mlp(), r, deferred);
      REQUIRE(trainer.is_ok());
      Engine& e = trainer->engine;
      for (int s = 0; s < 3; ++s) {
        REQUIRE(feed(e, make_batch(s)).is_ok());
        REQUIRE(e.train_step().is_ok());
      }
      const std::vector<uint8_t> before = parameter_bytes(e);
      const int64_t step = e.step();
      Batch bad = make_batch(3);
      if (nan) {
        bad.x[2] = std::numeric_limits<float>::quiet_NaN();
      } else {
        for (float& v : bad.x) v *= 1e18f;
      }
      REQUIRE(feed(e, bad).is_ok());
      auto failed = e.train_step();
      REQUIRE_FALSE(failed.is_ok());
      CHECK(failed.status().code() == Code::kNumerical);
      INFO(failed.status().message());
      CHECK(parameter_bytes(e) == before);
      CHECK(e.step() == step);
      check_next_step_as_if_never_failed(e, r, deferred);
    }
  }
}
