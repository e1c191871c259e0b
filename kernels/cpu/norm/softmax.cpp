// Softmax and LogSoftmax over the last axis (attention scores, classifier logits): one vectorized
// pass each for the max, the sum of exponentials and the output, rows split over the thread pool.
// Other axes are strided and decline to ref.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/norm.hpp"

namespace pock::cpu {
namespace {

// Rows smaller than this are batched into one task so that dispatch stays cheap.
constexpr size_t kMinElementsPerTask = size_t{1} << 13;

POCK_SIMD_CLONES float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = simd::max(m, x[i]);
  return m;
}

// y = exp(x - shift); returns the sum of y.
POCK_SIMD_CLONES float exp_shifted(const float* x, float shift, float* y, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    const float e = simd::exp(x[i] - shift);
    y[i] = e;
    sum += e;
  }
  return sum;
}

POCK_SIMD_CLONES float sum_exp_shifted(const float* x, float shift, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += simd::exp(x[i] - shift);
  return sum;
}

POCK_SIMD_CLONES void scale(float* y, float s, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

// y = (x - shift) - offset. Subtracting shift (the max) first is exact for nearby values; folding
// shift + offset into one constant would round it at the scale of x (6e-5 at x ~ 1000).
POCK_SIMD_CLONES void subtract_twice(const float* x, float shift, float offset, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - shift) - offset;
}

// Subtracting the max keeps exp() in range; the sum is then >= 1, so 1/sum and log(sum) are safe.
void softmax_row(const float* x, float* y, int64_t n) {
  const float m = row_max(x, n);
  scale(y, 1.0f / exp_shifted(x, m, y, n), n);
}

void log_softmax_row(const float* x, float* y, int64_t n) {
  const float m = row_max(x, n);
  subtract_twice(x, m, std::log(sum_exp_shifted(x, m, n)), y, n);
}

bool last_axis_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc& x = op.inputs[0];
  if (!is_f32(x) || !is_f32(op.outputs[0]) || x.rank < 1) return false;
  params::AxisNormParams p;
  // Trailing dims of size 1 after the axis leave the softmax axis contiguous.
  return params::parse(op, &p).is_ok() && p.axis_is_last(x);
}

template <void (*kRow)(const float*, float*, int64_t)>
Status last_axis_kernel(const KernelCall& c, const params::AxisNormParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t width = x.dims[p.axis];
  if (width == 0) return Status::ok();
  const size_t rows = static_cast<size_t>(numel(x) / width);
  const float* in = c.in_data<float>(0);
  float* out = c.out_data<float>(0);
  const size_t rows_per_task = std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(width));
  pthreadpool_t pool = rows > rows_per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, rows, balanced_tile(pool, rows, rows_per_task), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) kRow(in + r * width, out + r * width, width);
  });
  return Status::ok();
}

}  // namespace

void register_softmax(KernelTable& t) {
  using P = params::AxisNormParams;
  t.add(typed_kernel<P, last_axis_kernel<softmax_row>>("Softmax", DType::kF32, kCpuScore, last_axis_accepts));
  t.add(typed_kernel<P, last_axis_kernel<log_softmax_row>>("LogSoftmax", DType::kF32, kCpuScore, last_axis_accepts));
}

}  // namespace pock::cpu
