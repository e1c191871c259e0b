#include "kernels/cpu/axis_sum.hpp"

#include <algorithm>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 14;
// Rows are summed in f32 lanes in pieces this long, the pieces added in double: long rows and
// long batches stay as exact as ref's, at no measurable cost.
constexpr int64_t kPiece = int64_t{1} << 12;
// Rows this short are summed through a buffer of whole columns (run_axis_sum).
constexpr int64_t kShortRow = 64;

POCK_SIMD_CLONES float plain_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

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
  if (p.inner > 1 && p.inner <= kShortRow && p.outer > 1 && p.outer * p.inner <= kPiece) {
    // Short rows (a bias gradient on 4x4 planes: 8 images of 16 values per channel): a row sum per
    // (o, m) is a call and a horizontal sum for two vectors of work. Instead, for a block of
    // kept m, the outer rows accumulate into a buffer with long contiguous loops, then each m's
    // short row is added up. Each value is still a sum of at most kPiece terms in f32.
    constexpr int64_t kBuffer = 1024;
    const int64_t block = std::max<int64_t>(1, kBuffer / p.inner);
    const size_t per_task = static_cast<size_t>(block);
    parallel_for(pool, kept, balanced_tile(pool, kept, per_task), [&](size_t begin, size_t end) {
      float buffer[kBuffer];
      for (int64_t b = static_cast<int64_t>(begin); b < static_cast<int64_t>(end); b += block) {
        const int64_t e = std::min(static_cast<int64_t>(end), b + block), n = (e - b) * p.inner;
        std::fill(buffer, buffer + n, 0.0f);
        for (int64_t o = 0; o < p.outer; ++o) loops.accumulate(x + (o * p.mid + b) * p.inner, buffer, n);
        // A plain sum: the buffer already holds the loops' terms (x, x^2 or |x|).
        for (int64_t m = b; m < e; ++m) y[m] = plain_sum(buffer + (m - b) * p.inner, p.inner);
      }
    });
    return;
  }
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
