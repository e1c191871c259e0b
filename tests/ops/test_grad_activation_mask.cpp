// The Relu, Relu6, Clip and ThresholdedRelu gradients through the 1-byte mask (ClipMask in the forward pass,
// MaskGrad in the backward), compiled and run whole: on L = sum(r * f(a * w)) with w trained, a
// and r constants, the activation's input a * w is an arena tensor that nothing else in the
// backward reads, so the rule saves a mask. Checked: the compiled program saves that mask and
// nothing else; w.grad against PyTorch's derivative written here (at the kinks too) and against
// central finite differences, on ref and cpu; and that the rule falls back to the (dy, v) ops
// where v stays alive anyway.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "blob/program_spec.hpp"
#include "blob/reader.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct Activation {
  const char* op;
  Attrs attrs;
  std::function<float(float)> derivative;  // PyTorch's f'(x): ReLU'(0) = 0, Relu6 exclusive, clamp inclusive
  std::vector<float> kinks;
};

std::vector<Activation> activations() {
  return {
      {"Relu", {}, [](float x) { return x > 0.0f ? 1.0f : 0.0f; }, {0.0f}},
      {"Relu6", {}, [](float x) { return x > 0.0f && x < 6.0f ? 1.0f : 0.0f; }, {0.0f, 6.0f}},
      {"Clip", Attrs{{"min", -0.5}, {"max", 1.5}}, [](float x) { return x >= -0.5f && x <= 1.5f ? 1.0f : 0.0f; },
       {-0.5f, 1.5f}},
      {"Clip", Attrs{{"max", 0.25}}, [](float x) { return x <= 0.25f ? 1.0f : 0.0f; }, {0.25f}},
      // ONNX's ThresholdedRelu: x passes where x > alpha (strictly); below a negative alpha the
      // output 0 looks like a passed x = 0, so the mask must come from x.
      {"ThresholdedRelu", Attrs{{"alpha", 0.5}}, [](float x) { return x > 0.5f ? 1.0f : 0.0f; }, {0.5f}},
      {"ThresholdedRelu", Attrs{{"alpha", -0.25}}, [](float x) { return x > -0.25f ? 1.0f : 0.0f; }, {-0.25f, 0.0f}},
  };
}

constexpr int64_t kN = 256;  // a multiple of 64: the arena's alignment adds nothing to a mask of kN bytes

struct Model {
  Graph graph;
  std::vector<float> a, w, r;
};

// loss = sum(r * f(a * w)); w trainable. `h_is_read` adds a second use of h = a * w, a Mul by w
// itself, whose gradient reads h in the backward.
Model build(const Activation& act, const std::vector<float>& a, const std::vector<float>& w, bool h_is_read = false) {
  Model m;
  m.a = a;
  m.w = w;
  m.r = random_floats(a.size(), 5, -1.0f, 1.0f);
  Graph& g = m.graph;
  const Shape shape{static_cast<int64_t>(a.size())};
  const TensorId wt = g.add_parameter_f32("w", shape, w);
  const TensorId at = g.add_constant("a", DType::kF32, shape, HostTensor::f32(shape, a).bytes);
  const TensorId rt = g.add_constant("r", DType::kF32, shape, HostTensor::f32(shape, m.r).bytes);
  TensorId h = g.add_node("Mul", {at, wt}).value()[0];
  TensorId y = g.add_node(act.op, {h}, act.attrs, "act").value()[0];
  if (h_is_read) y = g.add_node("Add", {y, g.add_node("Mul", {h, wt}).value()[0]}).value()[0];
  const TensorId weighted = g.add_node("Mul", {y, rt}).value()[0];
  const TensorId loss = g.add_node("ReduceSum", {weighted}, Attrs{{"keepdims", int64_t{0}}}).value()[0];
  REQUIRE(g.mark_output(loss, "loss").is_ok());
  return m;
}

Recipe gradient_recipe() {
  Recipe recipe;
  recipe.loss.type = "output";
  recipe.loss.logits = "loss";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.0;  // the step leaves w where it is: w.grad is the gradient at w
  return recipe;
}

std::vector<uint8_t> compile_model(const Model& m, CompileReport* report) {
  const Recipe recipe = gradient_recipe();
  CompileOptions options;
  options.expose_gradients = true;
  auto blob = compile(m.graph, &recipe, options, report);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  return std::move(blob.value());
}

size_t count_train_ops(const std::vector<uint8_t>& blob, const std::string& op) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), {}, &view).is_ok());
  auto spec = read_program_spec(view);
  REQUIRE(spec.is_ok());
  size_t n = 0;
  for (const FunctionSpec& f : spec->functions) {
    if (f.name != "train") continue;
    for (uint32_t i : f.ops) n += spec->ops[i].op == op;
  }
  return n;
}

Engine open(const std::vector<uint8_t>& blob, const std::string& backend) {
  Engine::Options options;
  options.backend = backend;
  auto e = Engine::open_buffer(blob.data(), blob.size(), options);
  INFO(e.status().to_string());
  REQUIRE(e.is_ok());
  return std::move(e.value());
}

std::vector<float> w_grad(Engine& e) {
  auto step = e.train_step();
  INFO(step.status().to_string());
  REQUIRE(step.is_ok());
  auto g = e.output<float>("w.grad");
  REQUIRE(g.is_ok());
  return g.value();
}

double loss_at(Engine& e, const std::vector<float>& w) {
  REQUIRE(e.set_parameter("w", w.data(), w.size() * sizeof(float)).is_ok());
  REQUIRE(e.infer().is_ok());
  return e.output<float>("loss").value()[0];
}

}  // namespace

TEST_CASE("Relu, Relu6 and Clip save a 1-byte mask and nothing else for their gradient", "[grad][activation_mask]") {
  const std::vector<float> a = random_floats(kN, 1, 0.5f, 2.0f), w = random_floats(kN, 2, -3.0f, 8.0f);
  for (const Activation& act : activations()) {
    INFO(act.op);
    CompileReport report;
    const std::vector<uint8_t> blob = compile_model(build(act, a, w), &report);
    CHECK(count_train_ops(blob, "ClipMask") == 1);
    CHECK(count_train_ops(blob, "MaskGrad") == 1);
    CHECK(count_train_ops(blob, std::string(act.op) + "Grad") == 0);
    // The (dy, x) form would keep h = a * w: 4 bytes an element.
    CHECK(report.saved_activation_bytes == static_cast<uint64_t>(kN));
  }
}

TEST_CASE("where the backward keeps the activation's input anyway, the gradient reads it", "[grad][activation_mask]") {
  const std::vector<float> a = random_floats(kN, 1, 0.5f, 2.0f), w = random_floats(kN, 2, -3.0f, 8.0f);
  for (const Activation& act : activations()) {
    INFO(act.op);
    CompileReport report;
    const std::vector<uint8_t> blob = compile_model(build(act, a, w, /*h_is_read=*/true), &report);
    CHECK(count_train_ops(blob, "ClipMask") == 0);
    CHECK(count_train_ops(blob, std::string(act.op) + "Grad") == 1);
  }
}

TEST_CASE("the masked gradient is PyTorch's, at the kinks too", "[grad][activation_mask]") {
  for (const Activation& act : activations()) {
    std::vector<float> a = random_floats(kN, 3, 0.5f, 2.0f), w = random_floats(kN, 4, -3.0f, 8.0f);
    // Exactly at each kink (a = 1, so h = w), and one float to either side — one *normal* float
    // at 0: a run flushes denormals to zero (runtime/denormals.hpp), so 1e-45 reads as the kink.
    auto step_from = [](float k, float direction) {
      return k == 0.0f ? std::copysign(std::numeric_limits<float>::min(), direction) : std::nextafter(k, direction);
    };
    size_t i = 0;
    for (float k : act.kinks) {
      for (float v : {k, step_from(k, -INFINITY), step_from(k, INFINITY)}) {
        a[i] = 1.0f;
        w[i++] = v;
      }
    }
    const Model m = build(act, a, w);
    CompileReport report;
    const std::vector<uint8_t> blob = compile_model(m, &report);
    for (const char* backend : {"ref", "cpu"}) {
      INFO(act.op << " on " << backend);
      Engine e = open(blob, backend);
      const std::vector<float> got = w_grad(e);
      REQUIRE(got.size() == a.size());
      for (size_t j = 0; j < a.size(); ++j) {
        INFO("element " << j << ": w = " << w[j] << ", a = " << a[j]);
        // d/dw r f(a w) = r f'(a w) a; the products in the order the backward computes them.
        CHECK(got[j] == (m.r[j] * act.derivative(a[j] * w[j])) * a[j]);
      }
    }
  }
}

TEST_CASE("the masked gradient matches central finite differences", "[grad][activation_mask]") {
  const double h = 1e-2;
  const size_t n = 32;  // few terms: the loss's f32 rounding stays small next to the gradients
  for (const Activation& act : activations()) {
    const std::vector<float> a = random_floats(n, 6, 0.5f, 2.0f);
    std::vector<float> w = random_floats(n, 7, -3.0f, 8.0f);
    for (size_t j = 0; j < n; ++j) {  // keep a * w beyond the step from every kink
      for (float k : act.kinks) {
        const float x = a[j] * w[j];
        if (std::fabs(x - k) < 4 * h) w[j] = static_cast<float>((k + (x < k ? -4 * h : 4 * h)) / a[j]);
      }
    }
    const Model m = build(act, a, w);
    Engine e = open(compile_model(m, nullptr), "ref");
    const std::vector<float> analytic = w_grad(e);
    // As support/grad_check.hpp: each loss may be off by half an ulp of its terms' magnitude
    // S <= sum |r a w| (|f(x)| <= |x| for these f) at both points.
    double magnitude = 0.0;
    for (size_t j = 0; j < n; ++j) magnitude += std::fabs(static_cast<double>(m.r[j]) * a[j] * w[j]);
    const double atol = 1e-4 + 4.0 * std::ldexp(1.0, -24) * magnitude / h;
    for (size_t j = 0; j < n; ++j) {
      std::vector<float> plus = w, minus = w;
      plus[j] = static_cast<float>(w[j] + h);
      minus[j] = static_cast<float>(w[j] - h);
      const double numeric = (loss_at(e, plus) - loss_at(e, minus)) / (static_cast<double>(plus[j]) - minus[j]);
      INFO(act.op << " element " << j << ": analytic " << analytic[j] << ", numeric " << numeric << ", atol " << atol);
      CHECK(std::fabs(numeric - analytic[j]) <= atol + 1e-2 * std::fabs(numeric));
    }
  }
}
