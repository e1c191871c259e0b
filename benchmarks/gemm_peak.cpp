// Single-core sgemm throughput of OpenBLAS next to Eigen, in one run, on the same matrices: the
// measurement behind using OpenBLAS for MatMul/Linear in the cpu backend (benchmarks/RESULTS.md).
//   ninja -C build-cpu gemm_peak && build-cpu/gemm_peak --benchmark_min_time=0.5
// Shapes: square sizes for the peak, then GEMMs of real layers (MobileNet 1x1 conv as M=Cout,
// K=Cin, N=H*W; a BERT-base Linear with a 128-token batch).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <Eigen/Core>
#include <random>
#include <vector>

extern "C" void openblas_set_num_threads(int num_threads);

namespace {

struct Matrices {
  std::vector<float> a, b, c;
  Matrices(int64_t m, int64_t n, int64_t k) : a(m * k), b(k * n), c(m * n) {
    std::mt19937 gen(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : a) v = dist(gen);
    for (float& v : b) v = dist(gen);
  }
};

void set_flops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_openblas(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  Matrices x(m, n, k);
  openblas_set_num_threads(1);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, x.a.data(), k, x.b.data(), n, 0.0f,
                x.c.data(), n);
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, n, k);
}

void BM_eigen(benchmark::State& state) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  Matrices x(m, n, k);
  Eigen::Map<const RowMajor> a(x.a.data(), m, k), b(x.b.data(), k, n);
  Eigen::Map<RowMajor> c(x.c.data(), m, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(x.c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, n, k);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K"});
  for (int64_t s : {64, 128, 256, 512, 1024}) b->Args({s, s, s});
  b->Args({96, 56 * 56, 24});  // MobileNetV2 1x1 expansion conv at 56x56
  b->Args({320, 7 * 7, 960});  // MobileNetV2 last 1x1 projection at 7x7
  b->Args({128, 3072, 768});   // BERT-base FFN up-projection, 128 tokens
  b->Args({128, 768, 3072});   // BERT-base FFN down-projection
}

BENCHMARK(BM_openblas)->Apply(shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_eigen)->Apply(shapes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
