// The layout pass (compiler/passes/layout_nhwc.cpp) on a small MobileNetV2 with a sparse recipe:
// which convolutions it makes channels-last, where it puts Transposes, and that the blob computes
// the same inference outputs, training losses and gradients as the one compiled without it, on the
// cpu backend (XNNPACK channels-last) and on ref (the reference NHWC kernel).
#include <catch2/catch.hpp>

#include "compiler/small_cnn.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "pock/compiler/models.hpp"
#include "support/temp_profile.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// features.0 (stem conv), features.1 (t=1: depthwise + project), features.2-3 (t=6, 24 channels:
// expand + depthwise + project each; features.3 adds its input back), features.4-5 (t=6, 32
// channels, stride 2 then 1, with its Add), features.6 (1x1 to 1280), classifier.
Graph small_mobilenet() {
  models::MobileNetV2Config c;
  c.batch = 2;
  c.resolution = 32;
  c.num_classes = 5;
  c.stages = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 2, 2}};
  c.dropout = 0;  // the train step must be deterministic to compare two blobs
  c.seed = 3;
  auto g = models::mobilenet_v2(c);
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// Sparse: features.5 on and the classifier train; below, the layers are frozen with their
// BatchNorm statistics (folded into the convolutions), so their forward pass is all the train
// function needs of them.
Recipe sparse_recipe() {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.05;
  r.optimizer.momentum = 0.9;
  TrainableRule late;
  late.match = "features.{5-6}.*";
  TrainableRule head;
  head.match = "classifier.*";
  r.trainable = {late, head};
  r.freeze_batchnorm_stats = true;
  return r;
}

// The frozen convolutions: 1 (features.0) + 2 (features.1) + 3 x 3 (features.2-4).
constexpr size_t kFrozenConvs = 12;

size_t count_nhwc_convs(const ProgramSpec& spec, const std::string& function) {
  const FunctionSpec* f = find_function(spec, function);
  REQUIRE(f);
  size_t n = 0;
  for (uint32_t i : f->ops) {
    const OpSpec& op = spec.ops[i];
    n += op.op == "Conv2d" && op.attrs.get_string("layout", "NCHW") == "NHWC";
  }
  return n;
}

// Adds whose output is channels-last: [N, H, W, C] with C the last dim, i.e. not [N, C, H, W].
size_t count_nhwc_adds(const ProgramSpec& spec, const std::string& function) {
  const FunctionSpec* f = find_function(spec, function);
  REQUIRE(f);
  size_t n = 0;
  for (uint32_t i : f->ops) {
    const OpSpec& op = spec.ops[i];
    if (op.op != "Add") continue;
    // An NHWC Add reads a tensor an NHWC conv wrote.
    for (uint32_t j : f->ops) {
      const OpSpec& w = spec.ops[j];
      if (w.op == "Conv2d" && w.attrs.get_string("layout", "NCHW") == "NHWC" && w.outputs[0] == op.inputs[0]) {
        ++n;
        break;
      }
    }
  }
  return n;
}

CompileOptions options_with(bool layout) {
  CompileOptions o;
  o.layout = layout;
  o.expose_gradients = true;
  return o;
}

struct Run {
  std::vector<float> logits;
  std::vector<float> losses;
  std::vector<std::vector<float>> grads;  // after the last step
};

const char* const kTrained[] = {"features.5.conv.0.0.weight", "features.5.conv.1.1.bias", "classifier.1.weight"};

Run run(const std::vector<uint8_t>& blob, const std::string& backend) {
  Engine engine = open_engine(blob, backend);
  Run r;
  const auto image = uniform_values(2 * 3 * 32 * 32, -2.0f, 2.0f, 41);
  REQUIRE(engine.set_input("image", image).is_ok());
  REQUIRE(engine.infer().is_ok());
  r.logits = engine.output<float>("logits").value();
  for (uint32_t step = 0; step < 3; ++step) {
    REQUIRE(engine.set_input("image", uniform_values(2 * 3 * 32 * 32, -2.0f, 2.0f, 50 + step)).is_ok());
    REQUIRE(engine.set_input("label", std::vector<int64_t>{step % 5, (step + 2) % 5}).is_ok());
    auto loss = engine.train_step();
    INFO(loss.status().to_string());
    REQUIRE(loss.is_ok());
    r.losses.push_back(loss.value());
  }
  for (const char* name : kTrained) {
    auto g = engine.output<float>(std::string(name) + ".grad");
    INFO(name << ": " << g.status().to_string());
    REQUIRE(g.is_ok());
    r.grads.push_back(g.value());
  }
  return r;
}

// Different summation orders (XNNPACK's bias inside or outside its operator; the reference
// kernel's identical sums) give float-rounding differences only.
void check_same_results(const Run& a, const Run& b) {
  CHECK(max_relative_difference(a.logits, b.logits) < 1e-5);
  CHECK(max_relative_difference(a.losses, b.losses) < 1e-5);
  for (size_t i = 0; i < a.grads.size(); ++i) {
    INFO(kTrained[i]);
    CHECK(max_relative_difference(a.grads[i], b.grads[i]) < 1e-4);
  }
}

}  // namespace

TEST_CASE("layout: frozen conv chains become NHWC with Transposes only at their ends", "[compiler][layout]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("SKIPPED: this build has no XNNPACK; the layout pass applies only where XNNPACK runs the convolutions");
    return;
  }
  const Graph g = small_mobilenet();
  const Recipe recipe = sparse_recipe();
  const ProgramSpec on = spec_of(compile_or_fail(g, &recipe, options_with(true)));
  const ProgramSpec off = spec_of(compile_or_fail(g, &recipe, options_with(false)));
  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    CHECK(count_nhwc_convs(off, fn) == 0);
    CHECK(count_ops(off, fn, "Transpose") == 0);
    CHECK(count_ops(on, fn, "Conv2d") == count_ops(off, fn, "Conv2d"));
    // One region from the image to features.4: one Transpose in (the image), one out.
    CHECK(count_ops(on, fn, "Transpose") == 2);
    CHECK(count_nhwc_adds(on, fn) == 1);  // features.3's residual Add
  }
  // infer and eval: every frozen conv. train: features.5's weight gradient reads features.4's
  // output, so the conv writing it stays NCHW (a saved activation is never transposed).
  CHECK(count_nhwc_convs(on, "infer") == kFrozenConvs);
  CHECK(count_nhwc_convs(on, "eval") == kFrozenConvs);
  CHECK(count_nhwc_convs(on, "train") == kFrozenConvs - 1);
  // The cpu backend claims every NHWC conv (XNNPACK), and the Transposes.
  for (const OpSpec& op : on.ops) {
    if (op.attrs.get_string("layout", "NCHW") == "NHWC" || op.op == "Transpose") CHECK(op.backend == "cpu");
  }
}

TEST_CASE("layout: no NHWC when another backend is requested or the option is off", "[compiler][layout]") {
  const Graph g = small_mobilenet();
  const Recipe recipe = sparse_recipe();
  CompileOptions ref = options_with(true);
  ref.backend = "ref";
  const ProgramSpec spec = spec_of(compile_or_fail(g, &recipe, ref));
  for (const char* fn : {"infer", "train", "eval"}) {
    CHECK(count_nhwc_convs(spec, fn) == 0);
    CHECK(count_ops(spec, fn, "Transpose") == 0);
  }
}

TEST_CASE("layout: same outputs, losses and gradients with and without NHWC, on cpu and ref", "[compiler][layout]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("SKIPPED: this build has no XNNPACK; the layout pass applies only where XNNPACK runs the convolutions");
    return;
  }
  const Graph g = small_mobilenet();
  const Recipe recipe = sparse_recipe();
  const std::vector<uint8_t> on = compile_or_fail(g, &recipe, options_with(true));
  const std::vector<uint8_t> off = compile_or_fail(g, &recipe, options_with(false));
  REQUIRE(count_nhwc_convs(spec_of(on), "train") > 0);  // else this compares a blob with itself
  for (const char* backend : {"cpu", "ref"}) {
    INFO(backend);
    check_same_results(run(on, backend), run(off, backend));
  }
}

namespace {

// A profile of every frozen convolution of the NCHW blob `spec` (what `pockc tune` writes for a
// blob compiled with --no-layout; XNNPACK takes frozen weights only) in which XNNPACK is the
// fastest cpu algorithm, or not, as `xnnpack_wins` says for each.
template <typename Pred>
BackendProfile profile_where(const ProgramSpec& spec, Pred xnnpack_wins) {
  BackendProfile p;
  p.backends = {"cpu"};
  for (const OpSpec& op : spec.ops) {
    if (op.op != "Conv2d" || spec.tensors[static_cast<size_t>(op.inputs[1])].storage != Storage::kWeights) continue;
    ProfiledOp entry;
    entry.signature = op_signature(spec, op);
    entry.op = op.op;
    entry.count = 1;
    const bool depthwise = op.attrs.get_int("groups", 1) > 1;
    const std::string other = depthwise ? "depthwise" : "im2col";
    const bool wins = xnnpack_wins(op);
    entry.cpu_algorithms = {{"xnnpack", wins ? 10.0 : 30.0}, {other, wins ? 20.0 : 15.0}};
    p.ops.push_back(std::move(entry));
  }
  return p;
}

bool is_depthwise(const OpSpec& op) { return op.attrs.get_int("groups", 1) > 1; }

}  // namespace

TEST_CASE("layout: a frozen convolution a tuned profile runs faster NCHW stays NCHW", "[compiler][layout]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("SKIPPED: this build has no XNNPACK; the layout pass applies only where XNNPACK runs the convolutions");
    return;
  }
  const Graph g = small_mobilenet();
  const Recipe recipe = sparse_recipe();
  const std::vector<uint8_t> off = compile_or_fail(g, &recipe, options_with(false));
  const ProgramSpec nchw = spec_of(off);
  auto compile_tuned = [&](const BackendProfile& p) {
    TempProfile profile(p);
    CompileOptions o = options_with(true);
    o.profile_path = profile.path;
    return compile_or_fail(g, &recipe, o);
  };

  // XNNPACK fastest everywhere: the regions the pass makes without a profile.
  const ProgramSpec xnnpack = spec_of(compile_tuned(profile_where(nchw, [](const OpSpec&) { return true; })));
  CHECK(count_nhwc_convs(xnnpack, "infer") == kFrozenConvs);
  CHECK(count_nhwc_convs(xnnpack, "train") == kFrozenConvs - 1);

  // XNNPACK slowest everywhere: nothing channels-last, no Transpose, each conv on the algorithm
  // the profile timed fastest.
  const ProgramSpec none = spec_of(compile_tuned(profile_where(nchw, [](const OpSpec&) { return false; })));
  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    CHECK(count_nhwc_convs(none, fn) == 0);
    CHECK(count_ops(none, fn, "Transpose") == 0);
  }
  for (const OpSpec& op : none.ops) {
    if (op.op != "Conv2d" || none.tensors[static_cast<size_t>(op.inputs[1])].storage != Storage::kWeights) continue;
    CHECK(op.attrs.get_string("cpu_algorithm", "") == (is_depthwise(op) ? "depthwise" : "im2col"));
  }

  // XNNPACK loses on the depthwise layers only: those stay NCHW, and the 1x1 chains between them
  // (features.2's project into features.3's expand, with features.3's residual Add) still go
  // channels-last.
  const std::vector<uint8_t> mixed_blob = compile_tuned(profile_where(nchw, [](const OpSpec& op) { return !is_depthwise(op); }));
  const ProgramSpec mixed = spec_of(mixed_blob);
  CHECK(count_nhwc_convs(mixed, "infer") > 0);
  CHECK(count_nhwc_convs(mixed, "infer") < kFrozenConvs);
  for (const OpSpec& op : mixed.ops) {
    if (op.op == "Conv2d" && is_depthwise(op)) CHECK(op.attrs.get_string("layout", "NCHW") == "NCHW");
  }
  // The same model: as the NCHW blob computes it on the cpu backend.
  check_same_results(run(mixed_blob, "cpu"), run(off, "cpu"));
}

namespace {

// What a TensorFlow export looks like: an NHWC image transposed to NCHW, then conv -> explicit Pad
// -> strided conv, all frozen.
Graph tf_like_chain() {
  Graph g;
  const TensorId image = g.add_input("image", DType::kF32, {2, 9, 9, 3});
  auto nchw = g.add_node("Transpose", {image}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
  REQUIRE(nchw.is_ok());
  auto constant = [&](const std::string& name, Shape shape, uint32_t seed) {
    const auto v = uniform_values(static_cast<size_t>(numel(shape)), -0.5f, 0.5f, seed);
    std::vector<uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return g.add_constant(name, DType::kF32, shape, std::move(bytes));
  };
  auto c1 = g.add_node("Conv2d", {nchw.value()[0], constant("w1", {6, 3, 1, 1}, 1), constant("b1", {6}, 2)},
                       {{"activation", std::string("relu6")}});
  REQUIRE(c1.is_ok());
  auto padded = g.add_node("Pad", {c1.value()[0]}, {{"pads", std::vector<int64_t>{0, 0, 0, 1, 0, 0, 1, 0}}});
  REQUIRE(padded.is_ok());
  auto c2 = g.add_node("Conv2d", {padded.value()[0], constant("w2", {6, 1, 3, 3}, 3), constant("b2", {6}, 4)},
                       {{"groups", int64_t{6}}, {"strides", std::vector<int64_t>{2, 2}}});
  REQUIRE(c2.is_ok());
  REQUIRE(g.mark_output(c2.value()[0], "y").is_ok());
  return g;
}

std::vector<float> infer_y(const std::vector<uint8_t>& blob, const std::string& backend) {
  Engine engine = open_engine(blob, backend);
  REQUIRE(engine.set_input("image", uniform_values(2 * 9 * 9 * 3, -2.0f, 2.0f, 9)).is_ok());
  REQUIRE(engine.infer().is_ok());
  return engine.output<float>("y").value();
}

}  // namespace

TEST_CASE("layout: a Pad stays inside a region and a model's own NHWC -> NCHW Transpose folds away",
          "[compiler][layout]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("SKIPPED: this build has no XNNPACK; the layout pass applies only where XNNPACK runs the convolutions");
    return;
  }
  const Graph g = tf_like_chain();
  const std::vector<uint8_t> on = compile_or_fail(g, nullptr, options_with(true));
  const std::vector<uint8_t> off = compile_or_fail(g, nullptr, options_with(false));
  const ProgramSpec spec = spec_of(on);
  CHECK(count_nhwc_convs(spec, "infer") == 2);
  // The model's Transpose and the region's entry cancel; only the exit to the NCHW output is left.
  CHECK(count_ops(spec, "infer", "Transpose") == 1);
  CHECK(count_ops(spec_of(off), "infer", "Transpose") == 1);
  for (const char* backend : {"cpu", "ref"}) {
    INFO(backend);
    CHECK(max_relative_difference(infer_y(on, backend), infer_y(off, backend)) < 1e-5);
  }
}
