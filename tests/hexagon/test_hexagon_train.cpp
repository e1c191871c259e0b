// An MLP trained with the Hexagon plugin — compiled with CompileOptions::backend_plugins, so the
// compiler places its Linear layers, their gradients, the Relu gradient, the bias gradients and
// the optimizer updates on the DSP, and opened with EngineConfig::backend_plugins — equals the
// CPU-only run step by step, full backpropagation and sparse, with Adam and with SGD; and it
// sends the DSP exactly one message per DSP segment of each step.
#include <cstdio>

#include "hexagon/hexagon_training.hpp"

using namespace pock;
using namespace pock::test;

namespace {

Recipe sgd_recipe() {
  Recipe r = classifier_recipe();
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.1;
  r.optimizer.momentum = 0.9;
  return r;
}

struct Case {
  std::string name;
  Recipe recipe;
};

std::vector<Case> cases() {
  Recipe sparse = classifier_recipe();
  sparse.trainable = {rule_match("fc2.*"), rule_match("fc1.bias")};  // fc1's weight frozen: no fc1 weight gradient
  Recipe sgd_sparse = sgd_recipe();
  sgd_sparse.trainable = {rule_bias_only()};
  return {{"adam, full", classifier_recipe()},
          {"adam, sparse (fc2 and fc1.bias)", sparse},
          {"sgd momentum, full", sgd_recipe()},
          {"sgd momentum, bias only", sgd_sparse}};
}

}  // namespace

TEST_CASE("hexagon: an MLP trained on the DSP equals the CPU-only run, step by step", "[hexagon][train]") {
  if (!hexagon_available()) return;
  constexpr int kSteps = 8;
  for (const Case& c : cases()) {
    SECTION(c.name) {
      MlpRun dsp = open_mlp(c.recipe, true);
      MlpRun cpu = open_mlp(c.recipe, false);
      REQUIRE(dsp.spec.spaces.size() == 1);
      CHECK(dsp.spec.spaces[0].backend == "hexagon");
      // Everything but the loss and its gradient (whose output the host reads) runs on the DSP.
      const auto [on_dsp, kernels] = placed_on(dsp.spec, "train", "hexagon");
      INFO(on_dsp << " of " << kernels << " train ops on the DSP");
      CHECK(on_dsp == kernels - 2);
      int bound = 0;
      for (const BackendInfo& b : dsp.engine->backends()) bound += b.name == "hexagon" ? b.ops_bound : 0;
      CHECK(bound > 0);

      const std::vector<std::string> names = trainable_names(dsp.spec);
      auto held_out_loss = [&] {  // the eval function, on the DSP too
        REQUIRE(feed(*dsp.engine, make_batch(1000)).is_ok());
        auto loss = dsp.engine->eval_step();
        REQUIRE(loss.is_ok());
        return *loss;
      };
      const float before = held_out_loss();
      for (int s = 0; s < kSteps; ++s) {
        const float got = step(*dsp.engine, s);
        const float want = step(*cpu.engine, s);
        INFO("step " << s << ": dsp " << got << ", cpu " << want);
        // f32 on both sides, in other orders of summation (BLAS on the CPU, fused multiply-adds
        // on the DSP) and with the DSP's own exp/sqrt: agreement to a few ulp per op, which eight
        // steps of training grow to about 1e-6.
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
        for (const std::string& name : names) {
          INFO(name);
          CHECK(relative_difference(parameter(*dsp.engine, name), parameter(*cpu.engine, name)) <= 2e-5);
        }
      }
      // And it learned.
      CHECK(held_out_loss() < before);
    }
  }
}

TEST_CASE("hexagon: one message per DSP segment of a step", "[hexagon][train]") {
  if (!hexagon_available()) return;
  for (const Case& c : cases()) {
    SECTION(c.name) {
      MlpRun dsp = open_mlp(c.recipe, true);
      const HexagonHooks hooks = hexagon_hooks();
      const int64_t segments = dsp_segments(dsp.spec, "train");
      INFO("DSP segments per train step: " << segments);
      CHECK(segments >= 2);  // the forward pass until the logits come back, then the backward pass
      const auto [on_dsp, kernels] = placed_on(dsp.spec, "train", "hexagon");
      for (int s = 0; s < 4; ++s) {
        REQUIRE(feed(*dsp.engine, make_batch(s)).is_ok());
        const pock_hexagon_counters before = hooks.read();
        REQUIRE(dsp.engine->train_step().is_ok());
        const pock_hexagon_counters after = hooks.read();
        INFO("step " << s);
        CHECK(static_cast<int64_t>(after.messages - before.messages) == segments);
        CHECK(static_cast<int64_t>(after.ops_run - before.ops_run) == on_dsp);
        CHECK(after.dsp_deaths == 0);
      }
      // Inference: the forward segment alone.
      const pock_hexagon_counters before = hooks.read();
      REQUIRE(dsp.engine->infer().is_ok());
      CHECK(static_cast<int64_t>(hooks.read().messages - before.messages) == dsp_segments(dsp.spec, "infer"));
    }
  }
}

TEST_CASE("hexagon: parameters and checkpoints reach the DSP's memory", "[hexagon][train]") {
  if (!hexagon_available()) return;
  MlpRun dsp = open_mlp(classifier_recipe(), true);
  const std::vector<std::string> names = trainable_names(dsp.spec);
  for (int s = 0; s < 3; ++s) step(*dsp.engine, s);
  const std::string path = "test_hexagon_train.ckpt";
  REQUIRE(dsp.engine->save_checkpoint(path).is_ok());
  const std::vector<std::vector<float>> saved = parameters(*dsp.engine, names);
  const float next = step(*dsp.engine, 3);
  // set_parameter writes the DSP's memory (the next forward pass reads it there).
  std::vector<float> zeros(saved[0].size(), 0.0f);
  REQUIRE(dsp.engine->set_parameter(names[0], zeros.data(), zeros.size() * sizeof(float)).is_ok());
  CHECK(parameter(*dsp.engine, names[0]) == zeros);
  REQUIRE(dsp.engine->load_checkpoint(path).is_ok());
  CHECK(parameters(*dsp.engine, names) == saved);
  CHECK(step(*dsp.engine, 3) == next);  // the same step from the same state (and Adam moments): the same loss
  std::remove(path.c_str());
}
