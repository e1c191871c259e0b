// Distinct engines are independent: two engines of one blob, trained at the same time on two
// threads, end with the weights that one engine trained alone reaches. CI also runs this case
// under ThreadSanitizer (.ci/run), which reports any shared state the engines touch unsynchronized.
#include <catch2/catch.hpp>

#include <thread>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int kSteps = 20;

std::vector<float> train_alone(const std::vector<uint8_t>& blob, int threads) {
  EngineConfig config;
  config.num_threads = threads;
  auto engine = Engine::open_buffer(blob.data(), blob.size(), config);
  REQUIRE(engine.is_ok());
  for (int s = 0; s < kSteps; ++s) {
    REQUIRE(feed(*engine, make_batch(s)).is_ok());
    REQUIRE(engine->train_step().is_ok());
  }
  std::vector<float> w(static_cast<size_t>(kHidden * kFeatures));
  REQUIRE(engine->get_parameter("fc1.weight", w.data(), w.size() * sizeof(float)).is_ok());
  return w;
}

}  // namespace

TEST_CASE("two engines on two threads train as one engine alone does", "[runtime][threads]") {
  const Recipe recipe = classifier_recipe();
  auto blob = compile(build_mlp(), &recipe);
  REQUIRE(blob.is_ok());
  const std::vector<float> alone = train_alone(blob.value(), 1);
  std::vector<float> a, b;
  // Catch2's assertions are not thread-safe: the threads only train; checks run here after join.
  auto run = [&](std::vector<float>* out) {
    EngineConfig config;
    config.num_threads = 1;
    auto engine = Engine::open_buffer(blob->data(), blob->size(), config);
    if (!engine.is_ok()) return;
    for (int s = 0; s < kSteps; ++s) {
      if (!feed(*engine, make_batch(s)).is_ok() || !engine->train_step().is_ok()) return;
    }
    out->resize(alone.size());
    if (!engine->get_parameter("fc1.weight", out->data(), out->size() * sizeof(float)).is_ok()) out->clear();
  };
  std::thread first(run, &a), second(run, &b);
  first.join();
  second.join();
  CHECK(a == alone);
  CHECK(b == alone);
}
