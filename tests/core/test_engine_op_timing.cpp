// The engine's per-op timing (pockc bench --per-op): off by default, one buffer sized when it is
// turned on, and every op of a step gets a duration that fits inside the step.
#include <catch2/catch.hpp>
#include <chrono>

#include "compiler/small_cnn.hpp"
#include "runtime/engine_core.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("per-op timing records every op of a train step inside the step's wall time", "[engine][timing]") {
  const Recipe recipe = full_bp_recipe();
  const std::vector<uint8_t> blob = compile_or_fail(build_small_cnn(), &recipe, {});
  const ProgramSpec spec = spec_of(blob);
  const FunctionSpec* train = find_function(spec, "train");
  REQUIRE(train);
  EngineOptions options;
  options.num_threads = 1;
  auto opened = EngineCore::open_buffer(blob.data(), blob.size(), options);
  REQUIRE(opened.is_ok());
  EngineCore& engine = *opened.value();
  const CnnBatch batch = cnn_batch(0);
  REQUIRE(engine.set_input("image", batch.image.data(), batch.image.size() * sizeof(float)).is_ok());
  REQUIRE(engine.set_input("label", batch.label.data(), batch.label.size() * sizeof(int64_t)).is_ok());

  CHECK(engine.op_time_ns().empty());  // off: no buffer, no clock reads
  float loss = 0;
  REQUIRE(engine.train_step(&loss).is_ok());
  CHECK(engine.op_time_ns().empty());

  engine.set_op_timing(true);
  REQUIRE(engine.op_time_ns().size() == spec.ops.size());
  const int64_t* buffer = engine.op_time_ns().data();
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(engine.train_step(&loss).is_ok());
  const int64_t step_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  CHECK(engine.op_time_ns().data() == buffer);  // the step wrote into the buffer sized above
  int64_t sum = 0;
  for (uint32_t op : train->ops) {
    INFO(spec.ops[op].op << " '" << spec.ops[op].name << "'");
    CHECK(engine.op_time_ns()[op] > 0);
    sum += engine.op_time_ns()[op];
  }
  CHECK(sum <= step_ns);
  const FunctionSpec* infer = find_function(spec, "infer");
  REQUIRE(infer);
  for (uint32_t op : infer->ops) CHECK(engine.op_time_ns()[op] == 0);  // infer did not run

  engine.set_op_timing(false);
  CHECK(engine.op_time_ns().empty());
}
