// End to end: an MLP built with the Graph API learns a separable synthetic task.
#include <catch2/catch.hpp>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("an MLP trains to a loss the untrained model does not reach", "[train][e2e]") {
  auto trainer = compile_trainer(build_mlp(), classifier_recipe());
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  REQUIRE(e.can_train());

  const Batch held_out = make_batch(-1);
  REQUIRE(feed(e, held_out).is_ok());
  auto untrained = e.eval_step();
  REQUIRE(untrained.is_ok());
  constexpr float kThreshold = 0.1f;
  REQUIRE(untrained.value() > 5 * kThreshold);  // chance level is ln 3 ~ 1.1

  for (int step = 0; step < 150; ++step) {
    REQUIRE(feed(e, make_batch(step)).is_ok());
    auto loss = e.train_step();
    REQUIRE(loss.is_ok());
  }
  CHECK(e.step() == 150);
  REQUIRE(feed(e, held_out).is_ok());
  auto trained = e.eval_step();
  REQUIRE(trained.is_ok());
  CHECK(trained.value() < kThreshold);

  // The inference function sees the trained weights: the held-out batch is classified correctly.
  REQUIRE(e.set_input("x", held_out.x).is_ok());
  REQUIRE(e.infer().is_ok());
  auto logits = e.output<float>("logits");
  REQUIRE(logits.is_ok());
  int correct = 0;
  for (int64_t i = 0; i < kBatch; ++i) {
    int best = 0;
    for (int c = 1; c < kClasses; ++c) {
      if (logits.value()[i * kClasses + c] > logits.value()[i * kClasses + best]) best = c;
    }
    correct += best == held_out.label[i];
  }
  CHECK(correct == kBatch);
}

TEST_CASE("with dropout and SGD momentum the MLP still trains", "[train][e2e]") {
  Recipe r = classifier_recipe();
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.1;
  r.optimizer.momentum = 0.9;
  MlpOptions o;
  o.dropout = 0.1;
  auto trainer = compile_trainer(build_mlp(o), r);
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  for (int step = 0; step < 150; ++step) {
    REQUIRE(feed(e, make_batch(step)).is_ok());
    REQUIRE(e.train_step().is_ok());
  }
  REQUIRE(feed(e, make_batch(-1)).is_ok());
  auto loss = e.eval_step();
  REQUIRE(loss.is_ok());
  CHECK(loss.value() < 0.1f);
}
