// ResNet-18's 3x3 stride-1 convolutions at 128x128, batch 8 (Conv2d and Conv2dGradInput, frozen
// weights as in its sparse scheme), on the cpu backend by each way the backend has for them:
//   /0  the other ways (XNNPACK, im2col / col2im + OpenBLAS sgemm) with Winograd off
//   /1  the backend's own Winograd F(4x4,3x3) (kernels/cpu/conv_winograd.cpp)
//   /2  oneDNN (kernels/cpu/conv_dnnl.cpp, its rule: Winograd, direct on 4x4 planes), where built
//   ninja -C build conv_winograd_bench && build/conv_winograd_bench --benchmark_min_time=0.5
// "GFLOP/s" counts the direct convolution's FLOPs (as `pockc inspect` does) per CPU second, so
// Winograd's figure is an effective rate that may exceed the machine's sgemm peak.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace {

using namespace pock;

struct OneOp {
  std::vector<uint8_t> blob;
  std::unique_ptr<Engine> engine;
};

// The op over x (Conv2d) or dy (Conv2dGradInput) of `channels` channels on a side x side plane,
// padding 1, with a frozen weight, prepared with `way` chosen.
OneOp build(bool grad, int64_t channels, int64_t side, int way) {
  using cpu::conv_winograd_testing::Choice;
  cpu::conv_winograd_testing::set_choice(way == 1 ? Choice::kAlways : Choice::kNever);
  cpu::conv_dnnl_testing::set_choice(way == 2 ? cpu::conv_dnnl_testing::Choice::kByRule
                                              : cpu::conv_dnnl_testing::Choice::kNever);
  const int64_t batch = 8;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  std::vector<float> w(static_cast<size_t>(channels * channels * 9));
  for (float& v : w) v = dist(gen);
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {batch, channels, side, side});
  const TensorId weight = g.add_parameter_f32("w", {channels, channels, 3, 3}, w);
  Attrs attrs{{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  if (grad) attrs.set("input_shape", std::vector<int64_t>{batch, channels, side, side});
  auto y = g.add_node(grad ? "Conv2dGradInput" : "Conv2d", {x, weight}, attrs, "op");
  (void)g.mark_output(y.value()[0], "y");
  OneOp o;
  o.blob = compile(g, nullptr).value();
  Engine::Options options;
  options.backend = "cpu";
  options.num_threads = 1;
  o.engine = std::make_unique<Engine>(Engine::open_buffer(o.blob.data(), o.blob.size(), options).value());
  std::vector<float> input(static_cast<size_t>(batch * channels * side * side));
  for (float& v : input) v = dist(gen);
  (void)o.engine->set_input("x", input);
  cpu::conv_winograd_testing::set_choice(Choice::kByRule);
  cpu::conv_dnnl_testing::set_choice(cpu::conv_dnnl_testing::Choice::kNever);
  return o;
}

void run(benchmark::State& state, bool grad) {
  const int64_t channels = state.range(0), side = state.range(1);
  OneOp o = build(grad, channels, side, static_cast<int>(state.range(2)));
  for (auto _ : state) {
    if (!o.engine->infer().is_ok()) state.SkipWithError("infer failed");
  }
  const double flops = 2.0 * 8 * channels * channels * 9 * side * side;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int way : {0, 1, 2}) {
    for (auto [channels, side] : {std::pair<int64_t, int64_t>{64, 32}, {128, 16}, {256, 8}, {512, 4}}) {
      b->Args({channels, side, way});
    }
  }
  b->Unit(benchmark::kMillisecond);
}

void Conv2d(benchmark::State& s) { run(s, false); }
void Conv2dGradInput(benchmark::State& s) { run(s, true); }
BENCHMARK(Conv2d)->Apply(shapes);
BENCHMARK(Conv2dGradInput)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
