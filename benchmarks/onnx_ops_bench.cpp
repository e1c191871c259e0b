// The ONNX ops that used to run on ref only — Resize, ResizeGrad, GatherElements, ScatterElements
// (add), GridSample, GridSampleGrad (bilinear, bicubic), TopK, RoiAlign, ReverseSequence, Det — on
// the cpu backend next to ref, in one run, at the sizes of a U-Net / FPN decoder stage (batch 2,
// 32 channels, 32 x 32 upsampled to 64 x 64); TopK picks 8 of 64 scores for 4096 rows (a mixture-of-experts router). RoiAlign pools 64 regions of a
// [2, 64, 32, 32] map to 7 x 7 bins (a detector's box head), ReverseSequence flips [64, 32, 256]
// sequences (a bidirectional layer's input), Det takes 4096 4 x 4 and 256 16 x 16 matrices.
//   ninja -C build onnx_ops_bench && build/onnx_ops_bench --benchmark_min_time=0.2
// Each case is one op compiled into a blob and run through an engine bound to the named backend,
// on 1 and on 2 threads (the argument), so the times include what a real step pays. ref runs on
// one thread either way; the 1-thread ratio is that of the kernels themselves.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace {

using namespace pock;

struct OneOp {
  std::vector<uint8_t> blob;
  std::unique_ptr<Engine> engine;
};

struct Operand {
  std::string name;
  DType dtype;
  Shape shape;
  int64_t index_range = 0;  // i64 operands: random indices in [0, index_range)
  bool boxes = false;        // f32 [R, 4]: boxes (x1, y1, x2, y2) inside a 32 x 32 map
};

std::vector<float> random_values(const Operand& o, std::mt19937& gen) {
  std::vector<float> v(static_cast<size_t>(numel(o.shape)));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (float& f : v) f = unit(gen);
  if (!o.boxes) return v;
  for (size_t r = 0; r + 3 < v.size(); r += 4) {
    const float x1 = 12 + 10 * v[r], y1 = 12 + 10 * v[r + 1];
    v[r] = x1, v[r + 1] = y1, v[r + 2] = x1 + 8 + 4 * v[r + 2], v[r + 3] = y1 + 8 + 4 * v[r + 3];
  }
  return v;
}

OneOp build(const std::string& op, const std::vector<Operand>& operands, const Attrs& attrs, const std::string& backend,
            int threads) {
  Graph g;
  std::vector<TensorId> ids;
  for (const Operand& o : operands) ids.push_back(g.add_input(o.name, o.dtype, o.shape));
  auto y = g.add_node(op, ids, attrs, "op");
  (void)g.mark_output(y.value()[0], "y");
  OneOp one;
  one.blob = compile(g, nullptr).value();
  Engine::Options options;
  options.backend = backend;
  options.num_threads = threads;
  one.engine = std::make_unique<Engine>(Engine::open_buffer(one.blob.data(), one.blob.size(), options).value());
  std::mt19937 gen(1);
  for (const Operand& o : operands) {
    if (o.dtype == DType::kI64) {
      std::vector<int64_t> v(static_cast<size_t>(numel(o.shape)));
      for (int64_t& i : v) i = std::uniform_int_distribution<int64_t>(0, o.index_range - 1)(gen);
      (void)one.engine->set_input(o.name, v.data(), v.size() * sizeof(int64_t));
    } else {
      const std::vector<float> v = random_values(o, gen);
      (void)one.engine->set_input(o.name, v.data(), v.size() * sizeof(float));
    }
  }
  return one;
}

const Shape kSmall{2, 32, 32, 32}, kLarge{2, 32, 64, 64};

Attrs resize_attrs(const std::string& mode, bool grad) {
  Attrs a{{"mode", mode}, {"scales", std::vector<double>{1, 1, 2, 2}}};
  a.set(grad ? "shape" : "sizes", grad ? kSmall : kLarge);
  return a;
}

void run(benchmark::State& state, const std::string& op, const std::vector<Operand>& operands, const Attrs& attrs,
         const std::string& backend) {
  OneOp one = build(op, operands, attrs, backend, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    if (!one.engine->infer().is_ok()) state.SkipWithError("infer failed");
  }
}

void Resize(benchmark::State& s, const std::string& mode, const std::string& backend) {
  run(s, "Resize", {{"x", DType::kF32, kSmall}}, resize_attrs(mode, false), backend);
}
void ResizeGrad(benchmark::State& s, const std::string& mode, const std::string& backend) {
  run(s, "ResizeGrad", {{"dy", DType::kF32, kLarge}}, resize_attrs(mode, true), backend);
}
// Along the channels (a gather of feature maps), and its gradient's scatter-add.
void GatherElements(benchmark::State& s, const std::string& backend) {
  run(s, "GatherElements", {{"x", DType::kF32, kLarge}, {"i", DType::kI64, kLarge, 32}}, {{"axis", int64_t{1}}}, backend);
}
void ScatterElementsAdd(benchmark::State& s, const std::string& backend) {
  run(s, "ScatterElements", {{"x", DType::kF32, kLarge}, {"i", DType::kI64, kLarge, 32}, {"u", DType::kF32, kLarge}},
      {{"axis", int64_t{1}}, {"reduction", std::string("add")}}, backend);
}
void GridSample(benchmark::State& s, const std::string& backend) {
  run(s, "GridSample", {{"x", DType::kF32, kSmall}, {"grid", DType::kF32, {2, 64, 64, 2}}}, {}, backend);
}
void GridSampleGrad(benchmark::State& s, const std::string& mode, const std::string& backend) {
  run(s, "GridSampleGrad",
      {{"dy", DType::kF32, kLarge}, {"x", DType::kF32, kSmall}, {"grid", DType::kF32, {2, 64, 64, 2}}},
      {{"mode", mode}}, backend);
}

void TopK(benchmark::State& s, const std::string& backend) {
  run(s, "TopK", {{"x", DType::kF32, {4096, 64}}}, {{"k", int64_t{8}}}, backend);
}

const Shape kRoiMap{2, 64, 32, 32}, kRoiBins{64, 64, 7, 7};

Attrs roi_attrs(const std::string& mode) {
  return {{"mode", mode}, {"output_height", int64_t{7}}, {"output_width", int64_t{7}}, {"sampling_ratio", int64_t{2}}};
}
void RoiAlign(benchmark::State& s, const std::string& mode, const std::string& backend) {
  run(s, "RoiAlign",
      {{"x", DType::kF32, kRoiMap}, {"rois", DType::kF32, {64, 4}, 0, true}, {"batch", DType::kI64, {64}, 2}},
      roi_attrs(mode), backend);
}
void RoiAlignGrad(benchmark::State& s, const std::string& mode, const std::string& backend) {
  run(s, "RoiAlignGrad",
      {{"dy", DType::kF32, kRoiBins}, {"x", DType::kF32, kRoiMap}, {"rois", DType::kF32, {64, 4}, 0, true},
       {"batch", DType::kI64, {64}, 2}},
      roi_attrs(mode), backend);
}
void ReverseSequence(benchmark::State& s, const std::string& backend) {
  run(s, "ReverseSequence", {{"x", DType::kF32, {64, 32, 256}}, {"lens", DType::kI64, {32}, 65}}, {}, backend);
}
void Det(benchmark::State& s, int64_t n, int64_t count, const std::string& backend) {
  run(s, "Det", {{"x", DType::kF32, {count, n, n}}}, {}, backend);
}
void DetGrad(benchmark::State& s, int64_t n, int64_t count, const std::string& backend) {
  run(s, "DetGrad", {{"dy", DType::kF32, {count}}, {"x", DType::kF32, {count, n, n}}}, {}, backend);
}

}  // namespace

BENCHMARK_CAPTURE(Resize, linear_cpu, "linear", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Resize, linear_ref, "linear", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Resize, nearest_cpu, "nearest", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Resize, nearest_ref, "nearest", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Resize, cubic_cpu, "cubic", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Resize, cubic_ref, "cubic", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ResizeGrad, linear_cpu, "linear", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ResizeGrad, linear_ref, "linear", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ResizeGrad, nearest_cpu, "nearest", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ResizeGrad, nearest_ref, "nearest", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GatherElements, cpu, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GatherElements, ref, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ScatterElementsAdd, cpu, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ScatterElementsAdd, ref, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSample, cpu, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSample, ref, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSampleGrad, cpu, "bilinear", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSampleGrad, ref, "bilinear", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSampleGrad, bicubic_cpu, "bicubic", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(GridSampleGrad, bicubic_ref, "bicubic", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(TopK, cpu, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(TopK, ref, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(RoiAlign, avg_cpu, "avg", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlign, avg_ref, "avg", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlign, max_cpu, "max", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlign, max_ref, "max", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlignGrad, avg_cpu, "avg", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlignGrad, avg_ref, "avg", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlignGrad, max_cpu, "max", "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RoiAlignGrad, max_ref, "max", "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ReverseSequence, cpu, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ReverseSequence, ref, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Det, 4x4_cpu, 4, 4096, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Det, 4x4_ref, 4, 4096, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Det, 16x16_cpu, 16, 256, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Det, 16x16_ref, 16, 256, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(DetGrad, 4x4_cpu, 4, 4096, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(DetGrad, 4x4_ref, 4, 4096, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(DetGrad, 16x16_cpu, 16, 256, "cpu")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(DetGrad, 16x16_ref, 16, 256, "ref")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
