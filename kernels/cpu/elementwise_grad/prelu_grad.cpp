// PReluGrad on the cpu backend: (dy, x, slope) -> (dx, dslope) at x's shape, for the slopes
// exporters write (one shared value, one per channel [C, 1, 1], one per feature, or one per
// element); any other broadcast runs on ref. Both outputs come from one pass over dy and x.
#include <algorithm>

#include "kernels/cpu/broadcast_pattern.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinParallelElements = size_t{1} << 15;

// slope_step 0: one slope for the whole run; 1: a slope per element.
POCK_SIMD_CLONES void prelu_grad_run(const float* dy, const float* x, const float* slope, int64_t slope_step, float* dx,
                                     float* dslope, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const bool positive = x[i] > 0.0f;
    dx[i] = positive ? dy[i] : dy[i] * slope[i * slope_step];
    dslope[i] = positive ? 0.0f : dy[i] * x[i];
  }
}

bool prelu_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 3 || op.num_outputs != 2) return false;
  for (int i = 0; i < 3; ++i) {
    if (!is_f32(op.inputs[i])) return false;
  }
  const pock_tensor_desc &dy = op.inputs[0], &x = op.inputs[1], &slope = op.inputs[2];
  return numel(dy) == numel(x) && broadcast_pattern(x, dy) == BroadcastPattern::kFull &&
         broadcast_pattern(slope, x) != BroadcastPattern::kOther;
}

Status prelu_grad(const KernelCall& c) {
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* slope = c.in_data<float>(2);
  float* dx = c.out_data<float>(0);
  float* dslope = c.out_data<float>(1);
  const int64_t n = numel(c.in(1));
  if (n == 0) return Status::ok();
  int64_t inner = 1;
  const BroadcastPattern pattern = broadcast_pattern(c.in(2), c.in(1), &inner);
  const int64_t slopes = numel(c.in(2));
  // Runs of `run` elements; each reads its slopes from slope_of(r), one value or `run` of them.
  int64_t run = n, step = 1;
  if (pattern == BroadcastPattern::kScalar) step = 0;
  if (pattern == BroadcastPattern::kRow) run = slopes;
  if (pattern == BroadcastPattern::kChannel) run = inner, step = 0;
  const auto slope_of = [&](int64_t r) {
    if (pattern == BroadcastPattern::kChannel) return slope + r % slopes;
    return slope;
  };
  const size_t runs = static_cast<size_t>(n / run);
  pthreadpool_t pool = static_cast<size_t>(n) >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  const size_t per_run = static_cast<size_t>(std::max<int64_t>(run, 1));
  const size_t tile = balanced_tile(pool, runs, (kMinParallelElements / 4 + per_run - 1) / per_run);
  parallel_for(pool, runs, tile, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const int64_t o = static_cast<int64_t>(r) * run;
      prelu_grad_run(dy + o, x + o, slope_of(static_cast<int64_t>(r)), step, dx + o, dslope + o, run);
    }
  });
  return Status::ok();
}

}  // namespace

void register_prelu_grad(KernelTable& t) { t.add(f32_kernel("PReluGrad", prelu_grad, prelu_grad_accepts)); }

}  // namespace pock::cpu
