// What the engine promises a caller that gets things wrong: inputs never set, a budget too small,
// a NaN with rollback off, two threads on one engine. Each gets a status that says what happened.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "pock/pock.h"
#include "support/engine_parameter.hpp"
#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::shared_ptr<std::vector<uint8_t>> mlp_blob(const Recipe& recipe = classifier_recipe()) {
  auto blob = compile(build_mlp(), &recipe);
  REQUIRE(blob.is_ok());
  return std::make_shared<std::vector<uint8_t>>(std::move(blob.value()));
}

}  // namespace

TEST_CASE("a step before its inputs are set fails and names the input", "[runtime][contract]") {
  auto blob = mlp_blob();
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  auto step = engine->train_step();
  CHECK(step.status().code() == Code::kInvalidArgument);
  CHECK_THAT(step.status().message(), Catch::Contains("'x' was never set"));
  CHECK(engine->infer().code() == Code::kInvalidArgument);
  CHECK(engine->step() == 0);
  const Batch b = make_batch(0);
  REQUIRE(engine->set_input("x", b.x).is_ok());
  step = engine->train_step();
  CHECK_THAT(step.status().message(), Catch::Contains("'label' was never set"));
  CHECK(engine->infer().is_ok());  // inference reads x only
  REQUIRE(engine->set_input("label", b.label).is_ok());
  CHECK(engine->train_step().is_ok());
}

TEST_CASE("a memory budget below the plan refuses to open, naming both figures", "[runtime][contract][budget]") {
  auto blob = mlp_blob();
  auto unlimited = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(unlimited.is_ok());
  EngineConfig tight;
  tight.memory_budget_bytes = 1024;
  auto refused = Engine::open_buffer(blob->data(), blob->size(), tight);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Code::kOutOfMemory);
  CHECK_THAT(refused.status().message(), Catch::Contains("more than the memory budget of 1024 bytes") &&
                                             Catch::Contains("rollback snapshot"));
  EngineConfig roomy;
  roomy.memory_budget_bytes = uint64_t{64} << 20;
  CHECK(Engine::open_buffer(blob->data(), blob->size(), roomy).is_ok());
}

TEST_CASE("the compiler refuses a plan above its memory budget", "[runtime][contract][budget]") {
  Recipe recipe = classifier_recipe();
  CompileOptions options;
  options.memory_budget_bytes = 2048;
  auto refused = compile(build_mlp(), &recipe, options);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Code::kOutOfMemory);
  CHECK_THAT(refused.status().message(), Catch::Contains("more than the memory budget of 2048 bytes"));
  options.memory_budget_bytes = uint64_t{64} << 20;
  CHECK(compile(build_mlp(), &recipe, options).is_ok());
}

TEST_CASE("with rollback off a NaN step says the parameters are as the step left them", "[runtime][contract]") {
  auto blob = mlp_blob();
  EngineConfig config;
  config.rollback_on_failure = false;
  auto engine = Engine::open_buffer(blob->data(), blob->size(), config);
  REQUIRE(engine.is_ok());
  Batch b = make_batch(0);
  b.x[0] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(feed(*engine, b).is_ok());
  const std::vector<float> before = test::parameter_values(*engine, "fc1.weight");
  auto step = engine->train_step();
  REQUIRE(step.status().code() == Code::kNumerical);
  CHECK_THAT(step.status().message(), Catch::Contains("rollback_on_failure is off"));
  CHECK_THAT(step.status().message(), !Catch::Contains("as before the step"));
  CHECK(test::parameter_values(*engine, "fc1.weight") != before);  // what the message says, the weights show
}

TEST_CASE("a call while another thread is inside one on the same engine gets POCK_ERR_BUSY", "[runtime][contract][threads]") {
  auto blob = mlp_blob();
  pock_engine* engine = nullptr;
  REQUIRE(pock_engine_open_buffer(blob->data(), blob->size(), nullptr, &engine) == POCK_OK);
  const Batch b = make_batch(0);
  REQUIRE(pock_engine_set_input(engine, "x", b.x.data(), b.x.size() * sizeof(float)) == POCK_OK);
  REQUIRE(pock_engine_set_input(engine, "label", b.label.data(), b.label.size() * sizeof(int64_t)) == POCK_OK);
  // One thread trains without pause; this one reads a parameter until a read lands inside a step.
  std::atomic<bool> stop{false};
  std::atomic<int> step_failures{0};
  std::thread trainer([&] {
    while (!stop.load()) {
      float loss = 0;
      const pock_status s = pock_engine_train_step(engine, &loss);
      if (s != POCK_OK && s != POCK_ERR_BUSY) step_failures.fetch_add(1);
    }
  });
  int busy = 0, ok = 0;
  std::vector<float> w(static_cast<size_t>(kHidden * kFeatures));
  for (int i = 0; i < 2000000 && busy == 0; ++i) {
    const pock_status s = pock_engine_get_parameter(engine, "fc1.weight", w.data(), w.size() * sizeof(float));
    busy += s == POCK_ERR_BUSY;
    ok += s == POCK_OK;
    REQUIRE((s == POCK_OK || s == POCK_ERR_BUSY));
  }
  stop.store(true);
  trainer.join();
  CHECK(busy > 0);
  CHECK(step_failures.load() == 0);
  CHECK(std::string(pock_status_string(POCK_ERR_BUSY)) == "engine busy");
  pock_engine_close(engine);
}
