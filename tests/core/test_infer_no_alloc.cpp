// After load, running the program allocates nothing: every buffer comes from the arena and the
// persistent region planned in the blob. Checked by replacing the global operator new/delete of
// this test binary and counting calls around pock_engine_infer (the C API, so that no Status
// message strings are built on the success path).
#include <catch2/catch.hpp>

#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/pock.h"
#include "support/blob_inputs.hpp"
#include "support/counting_new.hpp"
#include "support/tiny_blob.hpp"

using pock::test::allocations_during;

TEST_CASE("the allocation counter sees allocations", "[runtime][alloc]") {
  // Guards the test itself: if the replacement were not linked in, every count would be zero.
  static std::vector<int>* volatile escaped = nullptr;  // volatile: the allocation cannot be elided
  const long n = allocations_during([] {
    escaped = new std::vector<int>(100);
    delete escaped;
  });
  CHECK(n == 2);
}

TEST_CASE("infer allocates nothing after load", "[runtime][alloc]") {
  const std::vector<uint8_t> blob = pock::test::tiny_blob();
  REQUIRE_FALSE(blob.empty());
  pock_engine* engine = nullptr;
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &engine) == POCK_OK);
  const auto& input = pock::test::tiny::kInput;
  std::vector<float> output(6);

  pock_status status = POCK_OK;
  const long n = allocations_during([&] {
    for (int i = 0; i < 10 && status == POCK_OK; ++i) {
      status = pock_engine_set_input(engine, "x", input.data(), input.size() * sizeof(float));
      if (status == POCK_OK) status = pock_engine_infer(engine);
      if (status == POCK_OK) status = pock_engine_get_output(engine, "y", output.data(), output.size() * sizeof(float));
    }
  });
  INFO(pock_engine_last_error(engine));
  CHECK(status == POCK_OK);
  CHECK(n == 0);
  CHECK(pock::test::nearly_equal(output, pock::test::tiny::kExpectedOutput));
  pock_engine_close(engine);
}

TEST_CASE("a training step allocates nothing after load", "[runtime][alloc]") {
  using namespace pock;
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4, 3});
  const TensorId b = g.add_parameter_f32("bias", {3}, {0.1f, 0.2f, 0.3f});
  auto y = g.add_node("Add", {x, b}, {}, "add");
  REQUIRE(y.is_ok());
  REQUIRE(g.mark_output(y.value()[0], "y").is_ok());
  Recipe recipe;
  recipe.loss.type = "mse";
  recipe.loss.logits = "y";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.1;
  auto blob = compile(g, &recipe);
  if (!blob.is_ok()) {
    WARN("skipped: this build cannot compile a training step yet (" << blob.status().message() << ")");
    return;
  }
  pock_engine* engine = nullptr;
  REQUIRE(pock_engine_open_buffer(blob->data(), blob->size(), nullptr, &engine) == POCK_OK);
  REQUIRE(pock_engine_can_train(engine) == 1);
  REQUIRE(test::set_inputs_to_zero(engine, blob.value()));
  float loss = 0;
  pock_status status = pock_engine_train_step(engine, &loss);  // the first step may warm up lazily
  INFO(pock_engine_last_error(engine));
  REQUIRE(status == POCK_OK);
  const long n = allocations_during([&] {
    for (int i = 0; i < 5 && status == POCK_OK; ++i) status = pock_engine_train_step(engine, &loss);
  });
  CHECK(status == POCK_OK);
  CHECK(n == 0);
  pock_engine_close(engine);
}
