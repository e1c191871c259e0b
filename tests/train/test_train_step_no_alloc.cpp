// After the first step, a training step allocates nothing: global operator new is replaced in
// this binary and counted around pock_engine_train_step (the C API an app calls).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pock/pock.h"
#include "support/counting_new.hpp"
#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("train_step allocates nothing after the first step", "[train][alloc]") {
  // Every training feature that owns per-step work: dropout, Adam, accumulation, clipping, schedule.
  Recipe r = classifier_recipe();
  r.grad_accumulation = 2;
  r.clip_grad_norm = 1.0;
  r.schedule.type = "linear_warmup";
  r.schedule.warmup_steps = 3;
  MlpOptions o;
  o.dropout = 0.1;
  auto trainer = compile_trainer(build_mlp(o), r);
  REQUIRE(trainer.is_ok());
  pock_engine* e = trainer->engine.handle();
  const Batch batch = make_batch(0);
  REQUIRE(feed(trainer->engine, batch).is_ok());
  float loss = 0;
  REQUIRE(pock_engine_train_step(e, &loss) == POCK_OK);  // the first step may warm up lazily

  pock_status status = POCK_OK;
  const long n = allocations_during([&] {
    for (int s = 0; s < 6 && status == POCK_OK; ++s) status = pock_engine_train_step(e, &loss);
  });
  REQUIRE(status == POCK_OK);
  CHECK(n == 0);
}

TEST_CASE("an app's loop - inputs, step, reads by long names - allocates nothing", "[train][alloc]") {
  // Names longer than std::string's small buffer: a lookup that built a std::string would allocate.
  MlpOptions o;
  o.prefix = "encoder.layers.11.personalization_head.";
  auto trainer = compile_trainer(build_mlp(o), classifier_recipe());
  REQUIRE(trainer.is_ok());
  pock_engine* e = trainer->engine.handle();
  const Batch batch = make_batch(0);
  const std::string weight = o.prefix + "fc2.bias";
  std::vector<float> bias(kClasses);
  float loss = 0;
  auto app_step = [&] {
    pock_status s = pock_engine_set_input(e, "x", batch.x.data(), batch.x.size() * sizeof(float));
    if (s == POCK_OK) s = pock_engine_set_input(e, "label", batch.label.data(), batch.label.size() * sizeof(int64_t));
    if (s == POCK_OK) s = pock_engine_train_step(e, &loss);
    if (s == POCK_OK) s = pock_engine_get_parameter(e, weight.c_str(), bias.data(), bias.size() * sizeof(float));
    return s;
  };
  REQUIRE(app_step() == POCK_OK);

  pock_status status = POCK_OK;
  const long n = allocations_during([&] {
    for (int s = 0; s < 4 && status == POCK_OK; ++s) status = app_step();
  });
  REQUIRE(status == POCK_OK);
  CHECK(n == 0);
}

TEST_CASE("the allocation counter sees allocations (the test can fail)", "[train][alloc]") {
  static std::vector<int>* volatile escaped = nullptr;  // volatile: the allocation cannot be elided
  const long n = allocations_during([] { escaped = new std::vector<int>(100); });
  delete escaped;
  CHECK(n >= 1);
}
