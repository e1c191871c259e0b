// Frozen-scale folding (src/compiler/lowering/fold_frozen_scale.cpp): under the paper's bias-only
// scheme with frozen BatchNorm statistics, a frozen Conv2d -> BatchNorm whose shift trains becomes
// one Conv2d before autodiff. The expectation is the same recipe compiled with the rewrite off
// (CompileOptions::fold_frozen_scales = false), which trains through the BatchNorm itself.
#include <catch2/catch.hpp>
#include <cmath>

#include "small_cnn.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// conv-BN-ReLU6 blocks as MobileNetV2 has them (convolutions without a bias), one with a fixed
// bias, one without an activation after its BatchNorm:
//   c1: Conv2d(no bias) -> bn1 -> Relu6
//   c2: depthwise Conv2d(constant bias) -> bn2 -> Relu6
//   c3: 1x1 Conv2d(no bias, or a parameter bias) -> bn3
//   GlobalAvgPool -> Flatten -> fc: Linear(bias) -> logits
Graph build_conv_bn_net(bool c3_parameter_bias) {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kCnnBatch, 3, kCnnSide, kCnnSide});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  TensorId h = b.named("c1").conv2d(image, b.parameter_kaiming_uniform("c1.weight", {8, 3, 3, 3}, 1), kNoTensor, same);
  h = b.relu6(cnn_batch_norm(b, "bn1", h, 8, 10));
  Conv2dOptions depthwise = same;
  depthwise.groups = 8;
  h = b.named("c2").conv2d(h, b.parameter_kaiming_uniform("c2.weight", {8, 1, 3, 3}, 3),
                           b.constant("c2.fixed_bias", {8}, uniform_values(8, -0.5f, 0.5f, 4)), depthwise);
  h = b.relu6(cnn_batch_norm(b, "bn2", h, 8, 20));
  const TensorId c3_bias = c3_parameter_bias ? b.parameter_kaiming_uniform("c3.bias", {16}, 6, 8) : kNoTensor;
  h = b.named("c3").conv2d(h, b.parameter_kaiming_uniform("c3.weight", {16, 8, 1, 1}, 5), c3_bias);
  h = cnn_batch_norm(b, "bn3", h, 16, 30);
  h = b.flatten(b.global_avg_pool(h));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kCnnClasses, 16}, 7),
                                b.parameter_kaiming_uniform("fc.bias", {kCnnClasses}, 8, 16)),
           "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// The paper's bias-only scheme: every bias and BatchNorm shift trains, statistics stay frozen.
Recipe bias_only_recipe() {
  Recipe r = full_bp_recipe();  // SGD with momentum 0.9
  TrainableRule biases;
  biases.bias_only = true;
  r.trainable = {biases};
  r.freeze_batchnorm_stats = true;
  return r;
}

CompileOptions rewrite_off() {
  CompileOptions o;
  o.fold_frozen_scales = false;
  return o;
}

size_t count_fused(const ProgramSpec& spec, const std::string& function) {
  const FunctionSpec* f = find_function(spec, function);
  REQUIRE(f != nullptr);
  size_t n = 0;
  for (uint32_t i : f->ops) n += spec.ops[i].attrs.get_string("activation", "none") != "none";
  return n;
}

// Trains both blobs side by side for `steps` steps; the largest relative difference of the losses,
// the named parameters after training and the final logits. Also checks the parameters moved, so
// that agreement is not two copies of nothing.
double train_both(const std::vector<uint8_t>& folded_blob, const std::vector<uint8_t>& plain_blob,
                  const std::string& backend, const std::vector<std::string>& parameters, int steps) {
  Engine folded = open_engine(folded_blob, backend);
  Engine plain = open_engine(plain_blob, backend);
  std::vector<std::vector<float>> initial;
  for (const std::string& p : parameters) initial.push_back(parameter(plain, p));
  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    const CnnBatch batch = cnn_batch(static_cast<uint32_t>(step));
    const float a = train_once(folded, batch);
    const float b = train_once(plain, batch);
    REQUIRE(std::isfinite(b));
    worst = std::max(worst, max_relative_difference({a}, {b}));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    INFO(parameters[i]);
    const std::vector<float> trained = parameter(plain, parameters[i]);
    CHECK(max_relative_difference(trained, initial[i]) > 1e-4);
    worst = std::max(worst, max_relative_difference(parameter(folded, parameters[i]), trained));
  }
  const CnnBatch held_out = cnn_batch(99);
  return std::max(worst, max_relative_difference(infer_logits(folded, held_out), infer_logits(plain, held_out)));
}

}  // namespace

TEST_CASE("frozen-scale folding removes BatchNorm when only its shift trains", "[passes][fusion][batchnorm]") {
  const Graph g = build_conv_bn_net(/*c3_parameter_bias=*/false);
  const Recipe recipe = bias_only_recipe();
  CompileReport folded_report, plain_report;
  auto folded_result = compile(g, &recipe, {}, &folded_report);
  auto plain_result = compile(g, &recipe, rewrite_off(), &plain_report);
  INFO(folded_result.status().to_string() << " / " << plain_result.status().to_string());
  REQUIRE(folded_result.is_ok());
  REQUIRE(plain_result.is_ok());
  const std::vector<uint8_t>& folded = folded_result.value();
  const std::vector<uint8_t>& plain = plain_result.value();
  const ProgramSpec spec = spec_of(folded);
  const ProgramSpec plain_spec = spec_of(plain);

  // Without the rewrite each block keeps its BatchNorm (its shift trains, so the after-autodiff
  // folding cannot take it): the comparison below is against the unfolded arithmetic.
  CHECK(count_ops(plain_spec, "train", "BatchNorm") == 3);
  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    CHECK(count_ops(spec, fn, "BatchNorm") + count_ops(spec, fn, "BatchNormTrain") == 0);
    CHECK(count_ops(spec, fn, "Relu6") == 0);  // c1's and c2's ReLU6 fused into the convolution
    CHECK(count_fused(spec, fn) == 2);
  }
  // The shifts' gradients come from the convolutions' bias gradients, not from a BatchNorm backward
  // that scales dy (Mul) and sums it (ReduceSum).
  CHECK(count_ops(spec, "train", "Conv2dGradBias") == 3);
  CHECK(count_ops(plain_spec, "train", "Conv2dGradBias") == 0);
  CHECK(count_ops(spec, "train", "Mul") < count_ops(plain_spec, "train", "Mul"));
  CHECK(count_ops(spec, "train", "ReduceSum") < count_ops(plain_spec, "train", "ReduceSum"));
  // One fewer activation per block; the folded weights replace the frozen ones in the blob.
  CHECK(folded_report.arena_peak_bytes <= plain_report.arena_peak_bytes);
  CHECK(folded_report.weights_bytes <= plain_report.weights_bytes);

  const std::vector<std::string> params = {"bn1.bias", "bn2.bias", "bn3.bias", "fc.bias"};
  for (const char* backend : {"ref", "cpu"}) {
    SECTION(std::string("backend ") + backend) { CHECK(train_both(folded, plain, backend, params, 3) < 1e-5); }
  }
}

TEST_CASE("frozen-scale folding leaves a block whose convolution bias trains", "[passes][fusion][batchnorm]") {
  // Bias-only trains c3's own bias too: (b - mean) * s would change every step, so bn3 stays.
  const Graph g = build_conv_bn_net(/*c3_parameter_bias=*/true);
  const Recipe recipe = bias_only_recipe();
  const std::vector<uint8_t> folded = compile_or_fail(g, &recipe, {});
  const ProgramSpec spec = spec_of(folded);
  CHECK(count_ops(spec, "train", "BatchNorm") == 1);
  CHECK(count_ops(spec, "train", "Conv2dGradBias") == 3);  // c1, c2 folded; c3's own bias
  const std::vector<std::string> params = {"bn1.bias", "bn3.bias", "c3.bias"};
  CHECK(train_both(folded, compile_or_fail(g, &recipe, rewrite_off()), "ref", params, 3) < 1e-5);
}

TEST_CASE("frozen-scale folding is off without optimize", "[passes][fusion][batchnorm]") {
  const Graph g = build_conv_bn_net(/*c3_parameter_bias=*/false);
  const Recipe recipe = bias_only_recipe();
  CompileOptions unoptimized;
  unoptimized.optimize = false;
  CHECK(count_ops(spec_of(compile_or_fail(g, &recipe, unoptimized)), "train", "BatchNorm") == 3);
}
