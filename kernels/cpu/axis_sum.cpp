#include "kernels/cpu/axis_sum.hpp"

#include <algorithm>

#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 14;
// Rows are summed in f32 lanes in pieces this long, the pieces added in double: long rows and
// long batches stay as exact as ref's, at no measurable cost.
constexpr int64_t kPiece = int64_t{1} << 12;

double long_row_sum(const float* x, int64_t n, float (*row_sum)(const float*, int64_t)) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; i += kPiece) sum += row_sum(x + i, std::min(kPiece, n - i));
  return sum;
}

}  // namespace

bool sum_to_shape_plan(const pock_op_desc& op, AxisSum* plan) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  if (!is_f32(x) || !is_f32(y) || y.rank > x.rank) return false;
  // Align y to x's rank (missing leading dims are 1). A dim is kept where y has x's extent and
  // x's is not 1, summed where y has 1 and x does not; x's 1s are neither and go anywhere.
  int first = -1, last = -1;
  for (int d = 0; d < x.rank; ++d) {
    const int yd = d - (x.rank - y.rank);
    const int64_t target = yd >= 0 ? y.dims[yd] : 1;
    if (x.dims[d] == 1) continue;
    if (target == x.dims[d]) {
      if (first < 0) first = d;
      last = d;
    } else if (target != 1) {
      return false;
    }
  }
  // The kept dims must form one block: a summed dim between two kept ones is another pattern.
  for (int d = first; first >= 0 && d <= last; ++d) {
    const int yd = d - (x.rank - y.rank);
    if (x.dims[d] != 1 && (yd < 0 || y.dims[yd] != x.dims[d])) return false;
  }
  if (first < 0) {  // everything summed: one value
    plan->outer = numel(x);
    plan->mid = plan->inner = 1;
  } else {
    plan->outer = dims_product(x, 0, first);
    plan->mid = dims_product(x, first, last + 1);
    plan->inner = dims_product(x, last + 1, x.rank);
  }
  plan->kept = plan->mid;
  if (plan->mid == 1) {  // x is [outer, 1, inner]: one contiguous row
    plan->inner *= plan->outer;
    plan->outer = 1;
  }
  return numel(y) == plan->kept;
}

bool conv_grad_bias_plan(const pock_op_desc& op, AxisSum* plan) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &dy = op.inputs[0], &db = op.outputs[0];
  if (!is_f32(dy) || !is_f32(db) || dy.rank < 2 || db.rank != 1) return false;
  plan->outer = dy.dims[0];
  plan->mid = dy.dims[1];
  plan->inner = dims_product(dy, 2, dy.rank);
  plan->kept = db.dims[0];
  return plan->kept >= 0 && plan->kept <= plan->mid;
}

void run_axis_sum(const AxisSum& p, const float* x, float* y, pthreadpool_t pool, const AxisSumLoops& loops) {
  const size_t kept = static_cast<size_t>(p.kept);
  if (static_cast<size_t>(p.outer * p.mid * p.inner) < kMinElementsPerTask) pool = nullptr;
  if (p.inner > 1 || p.mid == 1) {
    const size_t per_task =
        std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, p.outer * p.inner)));
    parallel_for(pool, kept, balanced_tile(pool, kept, per_task), [&](size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m) {
        double sum = 0.0;
        for (int64_t o = 0; o < p.outer; ++o) {
          sum += long_row_sum(x + (o * p.mid + static_cast<int64_t>(m)) * p.inner, p.inner, loops.row_sum);
        }
        y[m] = static_cast<float>(sum);
      }
    });
    return;
  }
  // inner == 1: y accumulates whole rows of x, split into column ranges.
  const size_t per_task =
      std::max<size_t>(64, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, p.outer)));
  parallel_for(pool, kept, balanced_tile(pool, kept, per_task), [&](size_t begin, size_t end) {
    std::fill(y + begin, y + end, 0.0f);
    for (int64_t o = 0; o < p.outer; ++o)
      loops.accumulate(x + o * p.mid + static_cast<int64_t>(begin), y + begin, static_cast<int64_t>(end - begin));
  });
}

}  // namespace pock::cpu
