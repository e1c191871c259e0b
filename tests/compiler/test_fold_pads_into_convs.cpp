// Zero Pads folded into the convolutions that read them (src/compiler/lowering/
// fold_pads_into_convs.cpp), before autodiff. The expectation is the same model and recipe
// compiled without optimization, which runs every Pad and its cropping gradient.
#include <catch2/catch.hpp>
#include <cmath>

#include "small_cnn.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// TensorFlow's way of padding, written out as Pad ops before unpadded convolutions:
//   c1: Pad(bottom and right by one) -> Conv2d 3x3 stride 2          ("same" at stride 2)
//   c2a, c2b: one Pad(one on every side) read by a depthwise and a dense Conv2d, summed
//   c3: Pad(one on every side, value 0.5) -> Conv2d                  (not zero: stays a Pad)
//   GlobalAvgPool -> Flatten -> fc: Linear -> logits
Graph build_padded_net() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kCnnBatch, 3, kCnnSide, kCnnSide});
  Conv2dOptions stride2;
  stride2.strides = {2, 2};
  TensorId h = b.pad(image, {0, 0, 0, 0, 0, 0, 1, 1});
  h = b.relu(b.named("c1").conv2d(h, b.parameter_kaiming_uniform("c1.weight", {8, 3, 3, 3}, 1),
                                  b.parameter_kaiming_uniform("c1.bias", {8}, 2, 27), stride2));
  const TensorId padded = b.pad(h, {0, 0, 1, 1, 0, 0, 1, 1});
  Conv2dOptions depthwise;
  depthwise.groups = 8;
  const TensorId a = b.named("c2a").conv2d(padded, b.parameter_kaiming_uniform("c2a.weight", {8, 1, 3, 3}, 3),
                                           kNoTensor, depthwise);
  const TensorId d = b.named("c2b").conv2d(padded, b.parameter_kaiming_uniform("c2b.weight", {8, 8, 3, 3}, 4));
  h = b.relu(b.add(a, d));
  const TensorId filled = b.pad(h, {0, 0, 1, 1, 0, 0, 1, 1}, 0.5);
  h = b.named("c3").conv2d(filled, b.parameter_kaiming_uniform("c3.weight", {16, 8, 3, 3}, 5));
  h = b.flatten(b.global_avg_pool(h));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kCnnClasses, 16}, 6),
                                b.parameter_kaiming_uniform("fc.bias", {kCnnClasses}, 7, 16)),
           "logits");
  auto g = b.finish();
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

// The pads of the function's Conv2d named after `layer` (the op names carry the model's).
std::vector<int64_t> conv_pads(const ProgramSpec& spec, const std::string& function, const std::string& layer) {
  const FunctionSpec* f = find_function(spec, function);
  REQUIRE(f != nullptr);
  for (uint32_t i : f->ops) {
    const OpSpec& op = spec.ops[i];
    if (op.op == "Conv2d" && op.name.find(layer) != std::string::npos) return op.attrs.get_ints("pads", {0, 0, 0, 0});
  }
  FAIL("no Conv2d named after " << layer << " in " << function);
  return {};
}

}  // namespace

TEST_CASE("zero Pads fold into the convolutions that read them; training is unchanged", "[passes][fusion][conv]") {
  const Graph g = build_padded_net();
  const Recipe recipe = full_bp_recipe();
  CompileOptions plain_options;
  plain_options.optimize = false;
  CompileReport folded_report, plain_report;
  auto folded_result = compile(g, &recipe, {}, &folded_report);
  auto plain_result = compile(g, &recipe, plain_options, &plain_report);
  INFO(folded_result.status().to_string() << " / " << plain_result.status().to_string());
  REQUIRE(folded_result.is_ok());
  REQUIRE(plain_result.is_ok());
  const ProgramSpec spec = spec_of(folded_result.value());
  const ProgramSpec plain_spec = spec_of(plain_result.value());

  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    CHECK(count_ops(plain_spec, fn, "Pad") >= 3);
    CHECK(conv_pads(spec, fn, "c1") == std::vector<int64_t>{0, 0, 1, 1});
    CHECK(conv_pads(spec, fn, "c2a") == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(conv_pads(spec, fn, "c2b") == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(conv_pads(spec, fn, "c3") == std::vector<int64_t>{0, 0, 0, 0});  // its Pad fills 0.5
  }
  // Only c3's Pad is left forward, and its gradient's crop backward.
  CHECK(count_ops(spec, "infer", "Pad") == 1);
  CHECK(count_ops(spec, "train", "Pad") == 2);
  CHECK(folded_report.arena_peak_bytes < plain_report.arena_peak_bytes);

  const std::vector<std::string> params = {"c1.weight", "c1.bias", "c2a.weight", "c2b.weight", "c3.weight", "fc.weight"};
  for (const char* backend : {"ref", "cpu"}) {
    SECTION(std::string("backend ") + backend) {
      Engine folded = open_engine(folded_result.value(), backend);
      Engine plain = open_engine(plain_result.value(), backend);
      std::vector<std::vector<float>> initial;
      for (const std::string& p : params) initial.push_back(parameter(plain, p));
      for (uint32_t step = 0; step < 3; ++step) {
        const CnnBatch batch = cnn_batch(step);
        const float a = train_once(folded, batch), b = train_once(plain, batch);
        REQUIRE(std::isfinite(b));
        CHECK(max_relative_difference({a}, {b}) < 1e-5);
      }
      for (size_t i = 0; i < params.size(); ++i) {
        INFO(params[i]);
        const std::vector<float> trained = parameter(plain, params[i]);
        CHECK(max_relative_difference(trained, initial[i]) > 1e-4);  // it trained: agreement is not two copies of nothing
        CHECK(max_relative_difference(parameter(folded, params[i]), trained) < 1e-5);
      }
      const CnnBatch held_out = cnn_batch(99);
      CHECK(max_relative_difference(infer_logits(folded, held_out), infer_logits(plain, held_out)) < 1e-5);
    }
  }
}

TEST_CASE("zero Pads fold into convolutions in a blob compiled for inference only", "[passes][fusion][conv]") {
  const Graph g = build_padded_net();
  CompileOptions plain_options;
  plain_options.optimize = false;
  auto folded_result = compile(g, nullptr);
  auto plain_result = compile(g, nullptr, plain_options);
  INFO(folded_result.status().to_string() << " / " << plain_result.status().to_string());
  REQUIRE(folded_result.is_ok());
  REQUIRE(plain_result.is_ok());
  const ProgramSpec spec = spec_of(folded_result.value());
  CHECK(count_ops(spec, "infer", "Pad") == 1);
  CHECK(count_ops(spec_of(plain_result.value()), "infer", "Pad") == 3);
  CHECK(conv_pads(spec, "infer", "c1") == std::vector<int64_t>{0, 0, 1, 1});
  for (const char* backend : {"ref", "cpu"}) {
    INFO(backend);
    Engine folded = open_engine(folded_result.value(), backend);
    Engine plain = open_engine(plain_result.value(), backend);
    const CnnBatch batch = cnn_batch(7);
    CHECK(max_relative_difference(infer_logits(folded, batch), infer_logits(plain, batch)) < 1e-5);
  }
}
