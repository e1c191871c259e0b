// Frozen int8 weights on the DSP: an MLP whose frozen fc2 is int8 (recipe frozen_weights "int8")
// trains with the Hexagon plugin as it does on the CPU alone, step by step: LinearInt8 and
// LinearInt8InputGrad run as int8 products on HVX, and fc1 trains through them.
#include "hexagon/hexagon_training.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("hexagon: an MLP with a frozen int8 layer trained on the DSP equals the CPU-only run", "[hexagon][train][int8]") {
  if (!hexagon_available()) return;
  Recipe recipe = classifier_recipe();
  recipe.trainable = {rule_match("fc1.*")};
  recipe.frozen_weights = "int8";
  MlpRun dsp = open_mlp(recipe, true);
  MlpRun cpu = open_mlp(recipe, false);
  CHECK(train_ops_on_dsp(dsp.spec, "LinearInt8") == 1);
  CHECK(train_ops_on_dsp(dsp.spec, "LinearInt8InputGrad") == 1);
  const std::vector<std::string> names = trainable_names(dsp.spec);
  REQUIRE(names.size() == 2);
  float first = 0, last = 0;
  for (int s = 0; s < 12; ++s) {
    const float got = step(*dsp.engine, s);
    const float want = step(*cpu.engine, s);
    if (s == 0) first = got;
    last = got;
    INFO("step " << s << ": dsp " << got << ", cpu " << want);
    // The same integers on both sides (kernels/int8_rows.h); the float scaling may differ by an
    // ulp (the DSP fuses the bias add), which can move a rounding of the next row by one step.
    CHECK(std::fabs(got - want) <= 1e-4f * std::max(1.0f, std::fabs(want)));
    for (const std::string& n : names) {
      INFO(n);
      CHECK(relative_difference(parameter(*dsp.engine, n), parameter(*cpu.engine, n)) <= 1e-4);
    }
  }
  CHECK(last < first);
}
