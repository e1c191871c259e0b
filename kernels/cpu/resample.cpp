// cpu kernels of the resample family: Resize and ResizeGrad on f32.
// Resize is separable: one pass per resized axis (innermost first, as ref), each output position a
// weighted sum of input positions. Every pass's taps come from kernels/resample_taps.hpp at
// prepare, stored per target position as a compressed row (offsets, source positions, weights)
// with zero-weight taps dropped (so nearest reads one tap, and an infinity under a zero weight
// stays out of the sum, as in ref). ResizeGrad is the transpose: its table lists, for each input
// position, the output positions that read it, in output order, so the gradient is a gather too —
// no scatter, no write conflicts, and every row can go to its own thread. Between passes the
// values live in the backend's shared scratch, sized at prepare: a step allocates nothing.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/resample.hpp"
#include "kernels/resample_taps.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

// One axis of a [outer, src_len, inner] view resampled to [outer, dst_len, inner]: target position
// p is the sum over entries e in [start[p], start[p + 1]) of weight[e] * source position from[e].
struct AxisPass {
  int64_t outer = 1, src_len = 1, dst_len = 1, inner = 1;
  std::vector<int64_t> start, from;
  std::vector<float> weight;
};

// The taps of one axis resized from `in` to `out` positions; `transpose` lists them by input
// position instead (ResizeGrad), in the order of the output positions that read them.
void build_taps(const params::ResizeParams& p, double scale, int64_t in, int64_t out, bool transpose, AxisPass* a) {
  const int count = resize_tap_count(p.mode);
  std::vector<int64_t> index(static_cast<size_t>(out * count));
  std::vector<double> w(index.size());
  for (int64_t j = 0; j < out; ++j) resize_taps_at(p, scale, in, j, &index[static_cast<size_t>(j * count)], &w[static_cast<size_t>(j * count)]);
  const int64_t targets = transpose ? in : out;
  a->start.assign(static_cast<size_t>(targets + 1), 0);
  for (size_t e = 0; e < index.size(); ++e) {
    if (w[e] != 0.0) ++a->start[static_cast<size_t>((transpose ? index[e] : static_cast<int64_t>(e) / count) + 1)];
  }
  for (int64_t t = 0; t < targets; ++t) a->start[static_cast<size_t>(t + 1)] += a->start[static_cast<size_t>(t)];
  a->from.resize(static_cast<size_t>(a->start.back()));
  a->weight.resize(a->from.size());
  std::vector<int64_t> fill(a->start.begin(), a->start.end() - 1);
  for (size_t e = 0; e < index.size(); ++e) {  // in output order, so each row keeps ref's order of sums
    if (w[e] == 0.0) continue;
    const int64_t j = static_cast<int64_t>(e) / count;
    const size_t at = static_cast<size_t>(fill[static_cast<size_t>(transpose ? index[e] : j)]++);
    a->from[at] = transpose ? j : index[e];
    a->weight[at] = static_cast<float>(w[e]);
  }
}

// small: Resize's input shape; large: its output shape. Axes whose size and scale are both
// unchanged are the identity under every mode and get no pass.
std::vector<AxisPass> plan_passes(const params::ResizeParams& p, const pock_tensor_desc& small, const pock_tensor_desc& large,
                                  bool transpose) {
  std::vector<AxisPass> passes;
  const int rank = small.rank;
  Shape dims = shape_of(transpose ? large : small);
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t in = small.dims[d], out = large.dims[d];
    const double scale = p.scales[static_cast<size_t>(d)];
    if (in == out && scale == 1.0) continue;
    AxisPass a;
    for (int k = 0; k < d; ++k) a.outer *= dims[static_cast<size_t>(k)];
    for (int k = d + 1; k < rank; ++k) a.inner *= dims[static_cast<size_t>(k)];
    a.src_len = dims[static_cast<size_t>(d)];
    a.dst_len = transpose ? in : out;
    build_taps(p, scale, in, out, transpose, &a);
    dims[static_cast<size_t>(d)] = a.dst_len;
    passes.push_back(std::move(a));
  }
  return passes;
}

struct ResizePlan {
  params::ResizeParams p;
  std::vector<AxisPass> passes;
  size_t ping_floats = 0;  // the scratch's two halves: pass k writes half k % 2 (the last writes y)
  KernelScope* scope = nullptr;
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op, KernelScope& kernel_scope) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const bool transpose = std::string_view(op.op) == "ResizeGrad";
    passes = plan_passes(p, transpose ? op.outputs[0] : op.inputs[0], transpose ? op.inputs[0] : op.outputs[0], transpose);
    for (size_t k = 0; k + 1 < passes.size(); ++k) {  // the last pass writes y
      ping_floats = std::max(ping_floats, static_cast<size_t>(passes[k].outer * passes[k].dst_len * passes[k].inner));
    }
    POCK_RETURN_IF_ERROR(kernel_scope.reserve_scratch(2 * ping_floats * sizeof(float), "Resize passes"));
    scope = &kernel_scope;
    pool = thread_pool_for(op.num_threads);
    return Status::ok();
  }
};

POCK_SIMD_CLONES void scale_row(float* d, const float* s, float w, int64_t n) {
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) d[e] = w * s[e];
}

POCK_SIMD_CLONES void add_scaled_row(float* d, const float* s, float w, int64_t n) {
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) d[e] += w * s[e];
}

// Resampling the innermost axis: each line of src_len values becomes a line of dst_len.
void run_lines(const AxisPass& a, const float* src, float* dst, size_t begin, size_t end) {
  const int64_t* start = a.start.data();
  const int64_t* from = a.from.data();
  const float* weight = a.weight.data();
  for (size_t o = begin; o < end; ++o) {
    const float* s = src + static_cast<int64_t>(o) * a.src_len;
    float* d = dst + static_cast<int64_t>(o) * a.dst_len;
    for (int64_t t = 0; t < a.dst_len; ++t) {
      float acc = 0.0f;
      for (int64_t e = start[t]; e < start[t + 1]; ++e) acc += weight[e] * s[from[e]];
      d[t] = acc;
    }
  }
}

// Resampling an outer axis: each target row of `inner` contiguous values is a weighted sum of rows.
void run_rows(const AxisPass& a, const float* src, float* dst, size_t begin, size_t end) {
  for (size_t row = begin; row < end; ++row) {
    const int64_t o = static_cast<int64_t>(row) / a.dst_len, t = static_cast<int64_t>(row) % a.dst_len;
    const float* s = src + o * a.src_len * a.inner;
    float* d = dst + static_cast<int64_t>(row) * a.inner;
    const int64_t first = a.start[static_cast<size_t>(t)], last = a.start[static_cast<size_t>(t + 1)];
    if (first == last) {
      std::fill(d, d + a.inner, 0.0f);
      continue;
    }
    scale_row(d, s + a.from[static_cast<size_t>(first)] * a.inner, a.weight[static_cast<size_t>(first)], a.inner);
    for (int64_t e = first + 1; e < last; ++e) {
      add_scaled_row(d, s + a.from[static_cast<size_t>(e)] * a.inner, a.weight[static_cast<size_t>(e)], a.inner);
    }
  }
}

void run_pass(const AxisPass& a, const float* src, float* dst, pthreadpool_t pool) {
  if (a.inner == 1) {
    const size_t lines = static_cast<size_t>(a.outer);
    const size_t min_tile = static_cast<size_t>(std::max<int64_t>(1, 4096 / std::max<int64_t>(a.dst_len, 1)));
    parallel_for(pool, lines, balanced_tile(pool, lines, min_tile),
                 [&](size_t begin, size_t end) { run_lines(a, src, dst, begin, end); });
    return;
  }
  const size_t rows = static_cast<size_t>(a.outer * a.dst_len);
  const size_t min_tile = static_cast<size_t>(std::max<int64_t>(1, 4096 / a.inner));
  parallel_for(pool, rows, balanced_tile(pool, rows, min_tile),
               [&](size_t begin, size_t end) { run_rows(a, src, dst, begin, end); });
}

Status resample(const KernelCall& c, ResizePlan& plan) {
  const float* src = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  if (plan.passes.empty()) {  // every axis unchanged
    std::copy(src, src + numel(c.in(0)), y);
    return Status::ok();
  }
  float* ping = reinterpret_cast<float*>(plan.scope->scratch());
  for (size_t k = 0; k < plan.passes.size(); ++k) {
    float* dst = k + 1 == plan.passes.size() ? y : ping + (k % 2) * plan.ping_floats;
    run_pass(plan.passes[k], src, dst, plan.pool);
    src = dst;
  }
  return Status::ok();
}

bool accepts(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]) && is_f32(op.outputs[0]) &&
         op.inputs[0].rank == op.outputs[0].rank && op.inputs[0].rank >= 1;
}

}  // namespace

void register_resample(KernelTable& t) {
  t.add(prepared_kernel<ResizePlan, resample>("Resize", DType::kF32, kCpuScore, accepts));
  t.add(prepared_kernel<ResizePlan, resample>("ResizeGrad", DType::kF32, kCpuScore, accepts));
}

}  // namespace pock::cpu
