// Fusion passes (BatchNorm folding, bias-add and activation fusion), observed in compiled blobs:
// the optimized build must compute what the same model compiled with optimize=false computes —
// the unfused graph, run by the same kernels, is the independent expectation.
#include <catch2/catch.hpp>
#include <cmath>

#include "small_cnn.hpp"

using namespace pock;
using namespace pock::test;

namespace {

CompileOptions unoptimized() {
  CompileOptions o;
  o.optimize = false;
  return o;
}

// Ops of the function that carry a fused activation.
size_t count_fused(const ProgramSpec& spec, const std::string& function) {
  const FunctionSpec* f = find_function(spec, function);
  REQUIRE(f != nullptr);
  size_t n = 0;
  for (uint32_t i : f->ops) n += spec.ops[i].attrs.get_string("activation", "none") != "none";
  return n;
}

// A CNN with only activation fusions to make (no BatchNorm, no separate bias): fused and unfused
// must then agree bit for bit, in inference and through training.
Graph build_conv_relu_net() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kCnnBatch, 3, kCnnSide, kCnnSide});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  TensorId h = b.relu6(b.named("c1").conv2d(image, b.parameter_kaiming_uniform("c1.weight", {8, 3, 3, 3}, 1),
                                            b.parameter_kaiming_uniform("c1.bias", {8}, 2, 27), same));
  Conv2dOptions depthwise = same;
  depthwise.groups = 8;
  h = b.relu(b.named("c2").conv2d(h, b.parameter_kaiming_uniform("c2.weight", {8, 1, 3, 3}, 3),
                                  b.parameter_kaiming_uniform("c2.bias", {8}, 4, 9), depthwise));
  h = b.flatten(b.global_avg_pool(h));
  h = b.relu(b.named("fc1").linear(h, b.parameter_kaiming_uniform("fc1.weight", {16, 8}, 5),
                                   b.parameter_kaiming_uniform("fc1.bias", {16}, 6, 8)));
  b.output(b.named("fc2").linear(h, b.parameter_kaiming_uniform("fc2.weight", {kCnnClasses, 16}, 7),
                                 b.parameter_kaiming_uniform("fc2.bias", {kCnnClasses}, 8, 16)),
           "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// Trains both builds side by side; returns the largest relative difference seen in the losses,
// the trained parameters and the final logits.
double train_and_compare(const std::vector<uint8_t>& fused_blob, const std::vector<uint8_t>& plain_blob,
                         const std::string& backend, const std::vector<std::string>& parameters, int steps) {
  Engine fused = open_engine(fused_blob, backend);
  Engine plain = open_engine(plain_blob, backend);
  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    const CnnBatch batch = cnn_batch(static_cast<uint32_t>(step));
    const float a = train_once(fused, batch);
    const float b = train_once(plain, batch);
    REQUIRE(std::isfinite(b));
    worst = std::max(worst, max_relative_difference({a}, {b}));
  }
  for (const std::string& p : parameters) worst = std::max(worst, max_relative_difference(parameter(fused, p), parameter(plain, p)));
  const CnnBatch held_out = cnn_batch(99);
  return std::max(worst, max_relative_difference(infer_logits(fused, held_out), infer_logits(plain, held_out)));
}

}  // namespace

TEST_CASE("activation fusion is bit-exact in inference and training", "[passes][fusion]") {
  const Graph g = build_conv_relu_net();
  const Recipe recipe = full_bp_recipe();
  const std::vector<uint8_t> fused = compile_or_fail(g, &recipe, {});
  const std::vector<uint8_t> plain = compile_or_fail(g, &recipe, unoptimized());
  const ProgramSpec spec = spec_of(fused);
  // Every conv / linear followed by an activation fuses, in infer and in train: the backward
  // reads the activation's output, never the pre-activation. c1's and fc1's outputs stay for the
  // next layer's weight gradient, and ReluGrad / Relu6Grad read them; nothing else in the backward
  // reads c2's (global pooling's gradient reads no input), so its gradient saves a ClipMask of it.
  CHECK(count_fused(spec, "infer") == 3);
  CHECK(count_ops(spec, "infer", "Relu") + count_ops(spec, "infer", "Relu6") == 0);
  CHECK(count_fused(spec, "train") == 3);
  CHECK(count_ops(spec, "train", "Relu") + count_ops(spec, "train", "Relu6") == 0);
  CHECK(count_ops(spec, "train", "ReluGrad") == 1);
  CHECK(count_ops(spec, "train", "Relu6Grad") == 1);
  CHECK(count_ops(spec, "train", "ClipMask") == 1);
  CHECK(count_ops(spec, "train", "MaskGrad") == 1);

  const std::vector<std::string> params = {"c1.weight", "c1.bias", "c2.weight", "c2.bias",
                                           "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
  for (const char* backend : {"ref", "cpu"}) {
    SECTION(std::string("backend ") + backend) {
      Engine a = open_engine(fused, backend);
      Engine b = open_engine(plain, backend);
      CHECK(infer_logits(a, cnn_batch(0)) == infer_logits(b, cnn_batch(0)));
      CHECK(train_and_compare(fused, plain, backend, params, 3) == 0.0);
    }
  }
}

TEST_CASE("fusion matches the unfused graph on a conv-BN-ReLU6 CNN", "[passes][fusion]") {
  const Graph g = build_small_cnn();
  const std::vector<std::string> params = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

  SECTION("full backpropagation") {
    const Recipe recipe = full_bp_recipe();
    const std::vector<uint8_t> fused = compile_or_fail(g, &recipe, {});
    const ProgramSpec spec = spec_of(fused);
    // BatchNorm trains, so its running statistics change: nothing folds into the convolutions.
    CHECK(count_ops(spec, "infer", "BatchNorm") == 2);
    CHECK(count_ops(spec, "train", "BatchNormTrain") == 2);
    CHECK(count_ops(spec, "train", "Add") == count_ops(spec_of(compile_or_fail(g, &recipe, unoptimized())), "train",
                                                          "Add") - 2);  // c2's shift and fc1's bias joined a bias
    // c3 + Relu, fc1 + Relu6, and both BatchNorms + Relu6: in training form in train, inference
    // form in infer
    CHECK(count_fused(spec, "train") == 4);
    CHECK(count_fused(spec, "infer") == 4);
    for (const char* fn : {"infer", "train"}) CHECK(count_ops(spec, fn, "Relu6") == 0);
    std::vector<std::string> all = params;
    for (const char* p : {"c1.weight", "c1.bias", "c2.weight", "c3.weight", "c3.bias", "bn1.weight", "bn2.bias"}) {
      all.push_back(p);
    }
    for (const char* backend : {"ref", "cpu"}) {
      CHECK(train_and_compare(fused, compile_or_fail(g, &recipe, unoptimized()), backend, all, 3) < 1e-5);
    }
  }

  SECTION("frozen backbone (sparse)") {
    const Recipe recipe = frozen_backbone_recipe();
    const std::vector<uint8_t> fused = compile_or_fail(g, &recipe, {});
    const ProgramSpec spec = spec_of(fused);
    // The backbone is fixed: its BatchNorms fold in every function, and the folded convolutions
    // take their Relu6.
    for (const char* fn : {"infer", "train", "eval"}) {
      INFO(fn);
      CHECK(count_ops(spec, fn, "BatchNorm") == 0);
      CHECK(count_ops(spec, fn, "Relu6") == 0);
      CHECK(count_ops(spec, fn, "Add") == 0);
      CHECK(count_fused(spec, fn) == 4);  // c1, c2, c3, fc1
    }
    for (const char* backend : {"ref", "cpu"}) {
      CHECK(train_and_compare(fused, compile_or_fail(g, &recipe, unoptimized()), backend, params, 3) < 1e-5);
    }
  }
}

TEST_CASE("BatchNorm folding removes BatchNorm from inference within 1e-5", "[passes][fusion][batchnorm]") {
  const Graph g = build_small_cnn();
  const std::vector<uint8_t> fused = compile_or_fail(g, nullptr, {});
  const std::vector<uint8_t> plain = compile_or_fail(g, nullptr, unoptimized());
  const ProgramSpec spec = spec_of(fused);
  CHECK(count_ops(spec_of(plain), "infer", "BatchNorm") == 2);
  CHECK(count_ops(spec, "infer", "BatchNorm") == 0);
  CHECK(count_ops(spec, "infer", "Conv2d") == 3);
  CHECK(spec.functions.size() == 1);
  for (const char* backend : {"ref", "cpu"}) {
    INFO(backend);
    Engine a = open_engine(fused, backend);
    Engine b = open_engine(plain, backend);
    for (uint32_t i = 0; i < 3; ++i) CHECK(max_relative_difference(infer_logits(a, cnn_batch(i)), infer_logits(b, cnn_batch(i))) < 1e-5);
  }
}

TEST_CASE("BatchNorm does not fold when a value it reads can change", "[passes][fusion][batchnorm]") {
  const Graph g = build_small_cnn();
  SECTION("a trainable convolution before a frozen BatchNorm") {
    Recipe recipe = frozen_backbone_recipe();
    TrainableRule conv;
    conv.match = "c1.weight";
    recipe.trainable.push_back(conv);
    const ProgramSpec spec = spec_of(compile_or_fail(g, &recipe, {}));
    // bn2 still folds into the frozen c2; bn1 stays (in whichever form the recipe trains it).
    CHECK(count_ops(spec, "infer", "BatchNorm") == 1);
    CHECK(count_ops(spec, "train", "BatchNorm") + count_ops(spec, "train", "BatchNormTrain") == 1);
    // The gradient now flows through the folded c2 block into c1: still the unfused values.
    const std::vector<std::string> params = {"c1.weight", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    CHECK(train_and_compare(compile_or_fail(g, &recipe, {}), compile_or_fail(g, &recipe, unoptimized()), "ref", params,
                            3) < 1e-5);
  }
  SECTION("running statistics updated by training") {
    const Recipe recipe = full_bp_recipe();
    const ProgramSpec spec = spec_of(compile_or_fail(g, &recipe, {}));
    CHECK(count_ops(spec, "infer", "BatchNorm") == 2);
    CHECK(count_ops(spec, "eval", "BatchNorm") == 2);
  }
}

TEST_CASE("the Conv2d and Linear gradient rules refuse a fused node", "[passes][fusion]") {
  for (const char* op : {"Conv2d", "Linear"}) {
    INFO(op);
    ModelBuilder b;
    const bool conv = std::string(op) == "Conv2d";
    const TensorId x = conv ? b.input("x", DType::kF32, {2, 1, 4, 4}) : b.input("x", DType::kF32, {2, 4});
    const TensorId w = conv ? b.parameter_fill("w", {2, 1, 3, 3}, 0.1f) : b.parameter_fill("w", {2, 4}, 0.1f);
    TensorId y = b.op1(op, {x, w}, Attrs{{"activation", std::string("relu")}});
    if (conv) y = b.flatten(y);
    b.output(y, "logits");
    auto g = b.finish();
    REQUIRE(g.is_ok());
    Recipe recipe = full_bp_recipe();
    auto blob = compile(g.value(), &recipe);
    REQUIRE_FALSE(blob.is_ok());
    CHECK(blob.status().code() == Code::kUnsupportedOp);
    CHECK_THAT(blob.status().message(), Catch::Contains("fused activation 'relu'"));
  }
}

TEST_CASE("Conv2d and Linear accept only known activations", "[passes][fusion]") {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 4});
  const TensorId w = b.parameter_fill("w", {3, 4}, 0.5f);
  CHECK(b.op1("Linear", {x, w}, Attrs{{"activation", std::string("relu6")}}) != kNoTensor);
  CHECK(b.op1("Linear", {x, w}, Attrs{{"activation", std::string("gelu")}}) == kNoTensor);
  CHECK_THAT(b.status().message(), Catch::Contains("activation"));
  ModelBuilder c;
  const TensorId y = c.input("x", DType::kF32, {2, 4});
  CHECK(c.op1("Linear", {y, c.parameter_fill("w", {3, 4}, 0.5f)}, Attrs{{"activation", int64_t{1}}}) == kNoTensor);
}

TEST_CASE("a fused Linear computes relu6 of the product on ref and cpu", "[passes][fusion]") {
  // Independent expectation: the formula in double, clamped.
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 3});
  const TensorId w = b.parameter("w", {2, 3}, {1, -2, 3, 4, 5, 6});
  const TensorId bias = b.parameter("b", {2}, {0.5f, -1});
  b.output(b.op1("Linear", {x, w, bias}, Attrs{{"activation", std::string("relu6")}}), "y");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  const std::vector<uint8_t> blob = compile_or_fail(g.value(), nullptr, {});
  const std::vector<float> in = {1, 1, 1, -1, 0.25f, 0};
  std::vector<float> want;
  const float wv[2][3] = {{1, -2, 3}, {4, 5, 6}};
  const float bv[2] = {0.5f, -1};
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 2; ++j) {
      double acc = bv[j];
      for (int k = 0; k < 3; ++k) acc += static_cast<double>(in[static_cast<size_t>(r * 3 + k)]) * wv[j][k];
      want.push_back(static_cast<float>(std::min(6.0, std::max(0.0, acc))));
    }
  }
  for (const char* backend : {"ref", "cpu"}) {
    INFO(backend);
    Engine e = open_engine(blob, backend);
    REQUIRE(e.set_input("x", in).is_ok());
    REQUIRE(e.infer().is_ok());
    CHECK(e.output<float>("y").value() == want);
  }
}
