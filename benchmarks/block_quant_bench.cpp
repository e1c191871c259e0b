// LinearQ / LinearQInputGrad (frozen block-quantized weights, cpu backend; exact, and with
// compute "int8": AVX-512 VNNI integer products) next to f32 Linear / LinearInputGrad on the same
// decoded weights, in one run: SmolLM2-135M's layer shapes at the
// training batch (batch 4 x seq 128 = 512 rows) and at a decode step (1 row).
//   ninja -C build block_quant_bench && build/block_quant_bench --benchmark_min_time=0.3
// Each case is one op compiled into a blob and run through an engine bound to the cpu backend, so
// the times include what a real step pays (binding, the panel scratch, OpenBLAS).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace {

using namespace pock;

struct OneOp {
  std::vector<uint8_t> blob;
  std::unique_ptr<Engine> engine;
};

// y = op(x, w) with w [n, k] frozen: f32 values (Linear, LinearInputGrad) or their Q4_1 blocks.
OneOp build(const std::string& op, int64_t m, int64_t n, int64_t k, bool int8) {
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  std::vector<float> w(static_cast<size_t>(n * k));
  for (float& v : w) v = dist(gen);
  std::vector<uint8_t> blocks = gguf::from_f32(gguf::kQ4_1, w.data(), w.size()).value();
  (void)gguf::to_f32(gguf::kQ4_1, blocks.data(), w.size(), w.data());  // both sides use the same values
  const bool quantized = op.back() == 'Q' || op.find("QInput") != std::string::npos;
  const bool grad = op.find("InputGrad") != std::string::npos;
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {m, grad ? n : k});
  Attrs attrs;
  TensorId weight;
  if (quantized) {
    const int64_t row_bytes = static_cast<int64_t>(blocks.size()) / n;
    weight = g.add_constant("w", DType::kU8, {n, row_bytes}, std::move(blocks));
    attrs = Attrs{{"format", std::string("q4_1")}, {"in_features", k}};
    if (int8) attrs.set("compute", std::string("int8"));
  } else {
    weight = g.add_parameter_f32("w", {n, k}, w);
  }
  auto y = g.add_node(op, {x, weight}, attrs, "op");
  (void)g.mark_output(y.value()[0], "y");
  OneOp o;
  o.blob = compile(g, nullptr).value();
  Engine::Options options;
  options.backend = "cpu";
  o.engine = std::make_unique<Engine>(Engine::open_buffer(o.blob.data(), o.blob.size(), options).value());
  std::vector<float> input(static_cast<size_t>(m * (grad ? n : k)));
  for (float& v : input) v = dist(gen);
  (void)o.engine->set_input("x", input);
  return o;
}

void run(benchmark::State& state, const std::string& op, bool int8 = false) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  OneOp o = build(op, m, n, k, int8);
  for (auto _ : state) {
    if (!o.engine->infer().is_ok()) state.SkipWithError("infer failed");
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {512, 1}) {
    b->Args({m, 576, 576});     // q_proj, o_proj
    b->Args({m, 1536, 576});    // gate_proj, up_proj
    b->Args({m, 576, 1536});    // down_proj
    b->Args({m, 49152, 576});   // the tied LM head
  }
  b->Unit(benchmark::kMillisecond);
}

void Linear(benchmark::State& s) { run(s, "Linear"); }
void LinearQ(benchmark::State& s) { run(s, "LinearQ"); }
void LinearInputGrad(benchmark::State& s) { run(s, "LinearInputGrad"); }
void LinearQInputGrad(benchmark::State& s) { run(s, "LinearQInputGrad"); }
void LinearQInt8(benchmark::State& s) { run(s, "LinearQ", true); }
void LinearQInputGradInt8(benchmark::State& s) { run(s, "LinearQInputGrad", true); }
BENCHMARK(Linear)->Apply(shapes);
BENCHMARK(LinearQ)->Apply(shapes);
BENCHMARK(LinearQInt8)->Apply(shapes);
BENCHMARK(LinearInputGrad)->Apply(shapes);
BENCHMARK(LinearQInputGrad)->Apply(shapes);
BENCHMARK(LinearQInputGradInt8)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
