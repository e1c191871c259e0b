// Regression: the inference-form BatchNorm gradient rule kept a reference into the tensor table
// across emits, which reallocates; on MobileNetV2 with frozen statistics and a trainable block it
// read a dead shape and aborted the compiler.
#include <catch2/catch.hpp>
#include <cmath>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "pock/compiler/models.hpp"

using namespace pock;

TEST_CASE("frozen-statistics BatchNorm under a trainable block compiles and trains", "[train][batchnorm]") {
  models::MobileNetV2Config config;
  config.batch = 2;
  config.resolution = 32;
  config.num_classes = 10;
  config.width_mult = 0.25;
  auto graph = models::mobilenet_v2(config);
  REQUIRE(graph.is_ok());
  auto recipe = parse_recipe(R"({"loss": {"type": "cross_entropy"}, "freeze_batchnorm_stats": true,
                                 "trainable": [{"match": "features.1.*"}]})");
  REQUIRE(recipe.is_ok());
  auto blob = compile(graph.value(), &recipe.value());
  REQUIRE(blob.is_ok());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(engine.is_ok());
  std::vector<float> image(2 * 3 * 32 * 32);
  for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(0.01f * static_cast<float>(i));
  REQUIRE(engine->set_input("image", image).is_ok());
  REQUIRE(engine->set_input("label", std::vector<int64_t>{3, 7}).is_ok());
  auto loss = engine->train_step();
  REQUIRE(loss.is_ok());
  CHECK(std::isfinite(loss.value()));
}
