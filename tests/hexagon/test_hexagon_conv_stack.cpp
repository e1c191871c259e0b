// A stack of pointwise convolutions — the expand/project layers of MobileNet-style blocks —
// trained with the Hexagon plugin equals the CPU-only run step by step: the 1x1 Conv2d layers and
// their input, weight and bias gradients run on the DSP (compiled with the plugin, placed by its
// supports_op), the pooling and the loss on the CPU. Full backpropagation, sparse with a
// partial-channel update, and bias-only.
#include <random>

#include "hexagon/hexagon_training.hpp"
#include "pock/compiler/builder.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int64_t kBatch = 4, kSide = 5, kClasses = 3;

// image [4, 3, 5, 5] -> pw1 3->8 (bias) -> Relu6 -> pw2 8->8 -> Relu -> pw3 8->6 (bias)
//   -> GlobalAvgPool -> Flatten -> fc 6->3
Graph conv_stack() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kBatch, 3, kSide, kSide});
  TensorId h = b.relu6(b.named("pw1").conv2d(image, b.parameter_kaiming_uniform("pw1.weight", {8, 3, 1, 1}, 1),
                                             b.parameter_kaiming_uniform("pw1.bias", {8}, 2, 3)));
  h = b.relu(b.named("pw2").conv2d(h, b.parameter_kaiming_uniform("pw2.weight", {8, 8, 1, 1}, 3)));
  h = b.named("pw3").conv2d(h, b.parameter_kaiming_uniform("pw3.weight", {6, 8, 1, 1}, 4),
                            b.parameter_kaiming_uniform("pw3.bias", {6}, 5, 8));
  h = b.flatten(b.global_avg_pool(h));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kClasses, 6}, 6),
                                b.parameter_kaiming_uniform("fc.bias", {kClasses}, 7, 6)),
           "logits");
  return std::move(b.finish().value());
}

float stack_step(Engine& e, int index) {
  std::mt19937 gen(500u + static_cast<uint32_t>(index));
  std::uniform_real_distribution<float> pixel(-2.0f, 2.0f);
  std::vector<float> image(static_cast<size_t>(kBatch * 3 * kSide * kSide));
  for (float& v : image) v = pixel(gen);
  std::vector<int64_t> label;
  for (int64_t i = 0; i < kBatch; ++i) label.push_back(static_cast<int64_t>(gen() % kClasses));
  REQUIRE(e.set_input("image", image).is_ok());
  REQUIRE(e.set_input("label", label).is_ok());
  return checked_train_step(e);
}


}  // namespace

TEST_CASE("hexagon: a pointwise-conv stack trained on the DSP equals the CPU-only run, step by step", "[hexagon][train]") {
  if (!hexagon_available()) return;
  Recipe full = classifier_recipe();
  Recipe sparse = classifier_recipe();
  sparse.trainable = {rule_channels("pw3.weight", 4), rule_match("pw3.bias"), rule_match("fc.*")};
  Recipe bias_only = classifier_recipe();
  bias_only.optimizer.type = "sgd";
  bias_only.optimizer.lr = 0.1;
  bias_only.optimizer.momentum = 0.9;
  bias_only.trainable = {rule_bias_only()};
  struct Case {
    const char* name;
    Recipe recipe;
    int weight_grads, input_grads;  // pointwise gradients the DSP must get
  };
  for (const Case& c : {Case{"adam, full", full, 3, 2}, Case{"adam, pw3 (4 of 6 channels) and fc", sparse, 1, 0},
                        Case{"sgd momentum, biases", bias_only, 0, 2}}) {
    SECTION(c.name) {
      MlpRun dsp = open_model(conv_stack(), c.recipe, true);
      MlpRun cpu = open_model(conv_stack(), c.recipe, false);
      CHECK(train_ops_on_dsp(dsp.spec, "Conv2d") == 3);
      CHECK(train_ops_on_dsp(dsp.spec, "Conv2dGradWeight") == c.weight_grads);
      CHECK(train_ops_on_dsp(dsp.spec, "Conv2dGradInput") == c.input_grads);
      CHECK(train_ops_on_dsp(dsp.spec, "Conv2dGradBias") >= 1);
      const std::vector<std::string> names = trainable_names(dsp.spec);
      REQUIRE_FALSE(names.empty());
      float first = 0, last = 0;
      for (int s = 0; s < 8; ++s) {
        const float got = stack_step(*dsp.engine, s % 2);
        const float want = stack_step(*cpu.engine, s % 2);
        if (s == 0) first = got;
        if (s == 6) last = got;  // batch 0 again
        INFO("step " << s << ": dsp " << got << ", cpu " << want);
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
        for (const std::string& name : names) {
          INFO(name);
          CHECK(relative_difference(parameter(*dsp.engine, name), parameter(*cpu.engine, name)) <= 2e-5);
        }
      }
      CHECK(last < first);  // it fits batch 0 better after three rounds of both batches
    }
  }
}
