// CumSum on f32 for the cpu backend. x is seen as [outer, len, inner] around the axis; each of the
// len steps adds one row of `inner` values to the previous row of sums, a loop the compiler vectorizes
// across inner (the sums of one column depend on each other; the columns do not). Sums run in f32
// in the same order as ref's double ones.
#include "kernels/axis_view.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/params/cumulative.hpp"

namespace pock::cpu {
namespace {

// y_row = previous + x_row; `previous` is the row of sums before it (nullptr: the first row).
POCK_SIMD_CLONES void add_row(const float* previous, const float* x_row, float* y_row, int64_t inner) {
  if (!previous) {
    for (int64_t i = 0; i < inner; ++i) y_row[i] = x_row[i];
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < inner; ++i) y_row[i] = previous[i] + x_row[i];
}

Status cumsum(const KernelCall& c, const params::CumulativeParams& p) {
  const AxisView b = view_around(c.in(0), p.axis);
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t o = 0; o < b.outer; ++o) {
    const float* xo = x + o * b.len * b.inner;
    float* yo = y + o * b.len * b.inner;
    // Row k of the walk is row `at(k)` of the block; an exclusive sum's first row is 0 and its
    // row k adds x's row k - 1.
    auto at = [&](int64_t k) { return (p.reverse ? b.len - 1 - k : k) * b.inner; };
    for (int64_t k = 0; k < b.len; ++k) {
      const float* previous = k > 0 ? yo + at(k - 1) : nullptr;
      if (!p.exclusive) {
        add_row(previous, xo + at(k), yo + at(k), b.inner);
      } else if (k == 0) {
        for (int64_t i = 0; i < b.inner; ++i) yo[at(0) + i] = 0.0f;
      } else {
        add_row(previous, xo + at(k - 1), yo + at(k), b.inner);
      }
    }
  }
  return Status::ok();
}

bool cumsum_accepts(const pock_op_desc& op) { return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]); }

}  // namespace

void register_cumulative(KernelTable& t) {
  t.add(typed_kernel<params::CumulativeParams, cumsum>("CumSum", DType::kF32, kCpuScore, cumsum_accepts));
}

}  // namespace pock::cpu
