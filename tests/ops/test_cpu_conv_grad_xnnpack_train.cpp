// The XNNPACK deconvolution way of Conv2dGradInput (kernels/cpu/conv_grad_xnnpack.cpp) inside real
// train steps: bias-only training of a small CNN whose frozen convolutions pass the gradient back
// (a strided one with a non-zero adjustment, a 1x1), forced onto the deconvolution. The steps must
// match the reference backend's, and allocate nothing — not through malloc either, which is how
// XNNPACK would allocate if a re-bound operator rebuilt its indirection buffer.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_grad_xnnpack.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/counting_malloc.hpp"

using namespace pock;
using pock::cpu::conv_grad_xnnpack_testing::Choice;

namespace {

constexpr int64_t kBatch = 2, kSide = 10, kClasses = 4;

std::vector<float> uniform_values(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// c1 3x3 (8 -> 16) -> Relu -> c2 3x3 stride 2 (16 -> 16; 10 + 2 - 3 is odd: adjustment 1) -> Relu
// -> c3 1x1 (16 -> 72: too deep for the direct 1x1 tiles' rule) -> Relu -> GlobalAvgPool -> fc.
// Every weight but fc's frozen, every bias trains: c3's and c2's input gradients are needed, c1's is not.
std::vector<uint8_t> compile_model() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {kBatch, 8, kSide, kSide});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  Conv2dOptions down = same;
  down.strides = {2, 2};
  TensorId h = b.relu(b.named("c1").conv2d(image, b.parameter_kaiming_uniform("c1.weight", {16, 8, 3, 3}, 1),
                                           b.parameter_kaiming_uniform("c1.bias", {16}, 2, 72), same));
  h = b.relu(b.named("c2").conv2d(h, b.parameter_kaiming_uniform("c2.weight", {16, 16, 3, 3}, 3),
                                  b.parameter_kaiming_uniform("c2.bias", {16}, 4, 144), down));
  h = b.relu(b.named("c3").conv2d(h, b.parameter_kaiming_uniform("c3.weight", {72, 16, 1, 1}, 5),
                                  b.parameter_kaiming_uniform("c3.bias", {72}, 6, 16)));
  h = b.flatten(b.global_avg_pool(h));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {kClasses, 72}, 7),
                                b.parameter_kaiming_uniform("fc.bias", {kClasses}, 8, 72)),
           "logits");
  auto graph = b.finish();
  REQUIRE(graph.is_ok());
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.optimizer.lr = 0.1;
  recipe.optimizer.momentum = 0.9;
  TrainableRule biases, head;
  biases.match = "*.bias";
  head.match = "fc.*";
  recipe.trainable = {biases, head};
  auto blob = compile(graph.value(), &recipe, CompileOptions{});
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  return std::move(blob.value());
}

Engine open(const std::vector<uint8_t>& blob, const std::string& backend, int threads) {
  Engine::Options options;
  options.backend = backend;
  options.num_threads = threads;
  auto engine = Engine::open_buffer(blob.data(), blob.size(), options);
  INFO(engine.status().to_string());
  REQUIRE(engine.is_ok());
  Engine e = std::move(engine.value());
  REQUIRE(e.set_input("image", uniform_values(static_cast<size_t>(kBatch * 8 * kSide * kSide), -2, 2, 100)).is_ok());
  REQUIRE(e.set_input("label", std::vector<int64_t>{1, 3}).is_ok());
  return e;
}

std::vector<float> parameter(Engine& engine, const std::string& name) {
  auto info = engine.info(name);
  REQUIRE(info.is_ok());
  std::vector<float> v(info->nbytes / sizeof(float));
  REQUIRE(engine.get_parameter(name, v.data(), info->nbytes).is_ok());
  return v;
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]) / std::max(1.0, std::fabs(double{b[i]})));
  return worst;
}

// Restores the speed rule however a test case ends.
struct ForceDeconvolution {
  ForceDeconvolution() { cpu::conv_grad_xnnpack_testing::set_choice(Choice::kAlways); }
  ~ForceDeconvolution() { cpu::conv_grad_xnnpack_testing::set_choice(Choice::kByRule); }
};

}  // namespace

TEST_CASE("train steps through XNNPACK deconvolutions match ref and allocate nothing", "[ops][cpu][xnnpack][alloc]") {
  if (!cpu::xnnpack_conv_available()) {
    WARN("skipped: this build has no XNNPACK (POCK_WITH_XNNPACK off or xnn_initialize failed)");
    return;
  }
  const std::vector<uint8_t> blob = compile_model();
  Engine ref = open(blob, "ref", 1);
  const std::vector<float> c1_bias_before = parameter(ref, "c1.bias");
  std::vector<float> ref_losses;
  for (int s = 0; s < 3; ++s) {
    auto loss = ref.train_step();
    REQUIRE(loss.is_ok());
    ref_losses.push_back(loss.value());
  }
  // c1's bias moves only through c2's and c3's input gradients: the comparison below checks them.
  REQUIRE(max_relative_difference(parameter(ref, "c1.bias"), c1_bias_before) > 1e-4);
  for (int threads : {1, 0}) {  // the caller's thread only, and the shared pool
    INFO("threads " << threads);
    ForceDeconvolution force;
    const int made = cpu::conv_grad_xnnpack_testing::kernels_made();
    Engine engine = open(blob, "cpu", threads);
    CHECK(cpu::conv_grad_xnnpack_testing::kernels_made() - made == 2);  // c2's and c3's input gradients
    auto first = engine.train_step();  // the first step may warm up lazily (OpenBLAS for the head)
    REQUIRE(first.is_ok());
    std::vector<float> losses{first.value()};
    losses.reserve(3);  // the counted steps must not count the test's own allocations
    Status status;
    const long n = test::mallocs_during([&] {
      for (int s = 1; s < 3 && status.is_ok(); ++s) {
        auto loss = engine.train_step();
        status = loss.status();
        if (status.is_ok()) losses.push_back(loss.value());
      }
    });
    INFO(status.to_string());
    REQUIRE(status.is_ok());
#ifdef POCK_COUNT_MALLOC
    CHECK(n == 0);
#else
    WARN("allocation count skipped: malloc can only be counted on glibc without a sanitizer (" << n << ")");
#endif
    // The losses after the first step depend on the bias updates, which depend on dx.
    REQUIRE(losses.size() == ref_losses.size());
    for (size_t s = 0; s < losses.size(); ++s)
      CHECK(std::fabs(losses[s] - ref_losses[s]) <= 1e-4 * (1 + std::fabs(ref_losses[s])));
    CHECK(max_relative_difference(parameter(engine, "c1.bias"), parameter(ref, "c1.bias")) < 1e-4);
  }
}
