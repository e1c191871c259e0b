// LayerNorm and RMSNorm: the normalized dims x.shape[axis:] are contiguous, so every axis is a
// set of rows; each row takes two or three vectorized passes, rows split over the thread pool.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/norm.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 13;

POCK_SIMD_CLONES float row_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

// Sum of (x - center)^2. LayerNorm centers first (two passes) rather than using E[x^2] - E[x]^2,
// which cancels catastrophically when the mean is large next to the spread.
POCK_SIMD_CLONES float row_sum_squares(const float* x, float center, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += (x[i] - center) * (x[i] - center);
  return sum;
}

// y = (x - center) * scale * gamma + beta, gamma and beta optional (null).
POCK_SIMD_CLONES void normalize(const float* x, float center, float scale, const float* gamma, const float* beta,
                                float* y, int64_t n) {
  if (gamma && beta) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale * gamma[i] + beta[i];
  } else if (gamma) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale * gamma[i];
  } else if (beta) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale + beta[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale;
  }
}

// The rows of a LayerNorm / RMSNorm: rows = prod(x.shape[:axis]), width = prod(x.shape[axis:]).
struct Rows {
  size_t rows = 0;
  int64_t width = 0;
};

Rows rows_of(const pock_tensor_desc& x, const params::AxisNormParams& p) {
  const params::RowSplit split = p.rows(x);
  return {static_cast<size_t>(split.rows), split.features};
}

// By the op's shared parser; false when its attributes are invalid (prepare then says why).
bool rows_of(const pock_op_desc& op, Rows* out) {
  params::AxisNormParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  *out = rows_of(op.inputs[0], p);
  return true;
}

const float* optional_input(const KernelCall& c, int i) { return c.has_input(i) ? c.in_data<float>(i) : nullptr; }
// A statistic output the node may not have (num_outputs) or not use (null data).
float* optional_output(const KernelCall& c, int i) { return c.num_outputs() > i ? c.out_data<float>(i) : nullptr; }

bool row_norm_accepts(const pock_op_desc& op) {
  Rows r;
  if (op.num_inputs < 1 || op.num_outputs < 1 || !rows_of(op, &r)) return false;
  for (int i = 0; i < op.num_inputs; ++i) {
    const pock_tensor_desc& t = op.inputs[i];
    if (!is_present(t)) continue;
    if (!is_f32(t)) return false;
    if (i > 0 && numel(t) != r.width) return false;  // gamma, beta: one value per normalized element
  }
  for (int i = 0; i < op.num_outputs; ++i) {
    if (!is_f32(op.outputs[i])) return false;
  }
  return true;
}

template <typename RowFn>
void for_rows(const KernelCall& c, const Rows& r, const RowFn& row_fn) {
  const size_t rows_per_task =
      std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(r.width, 1)));
  pthreadpool_t pool = r.rows > rows_per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, r.rows, balanced_tile(pool, r.rows, rows_per_task), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) row_fn(i);
  });
}

Status layer_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const Rows r = rows_of(c.in(0), p);
  const float* x = c.in_data<float>(0);
  const float* gamma = optional_input(c, 1);
  const float* beta = optional_input(c, 2);
  float* y = c.out_data<float>(0);
  float* mean_out = optional_output(c, 1);
  float* invstd_out = optional_output(c, 2);
  const float eps = static_cast<float>(p.eps);
  const float inv_width = r.width ? 1.0f / static_cast<float>(r.width) : 0.0f;
  for_rows(c, r, [&](size_t i) {
    const float* xr = x + i * r.width;
    const float mean = row_sum(xr, r.width) * inv_width;
    const float invstd = 1.0f / std::sqrt(row_sum_squares(xr, mean, r.width) * inv_width + eps);
    normalize(xr, mean, invstd, gamma, beta, y + i * r.width, r.width);
    if (mean_out) mean_out[i] = mean;
    if (invstd_out) invstd_out[i] = invstd;
  });
  return Status::ok();
}

Status rms_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const Rows r = rows_of(c.in(0), p);
  const float* x = c.in_data<float>(0);
  const float* gamma = optional_input(c, 1);
  float* y = c.out_data<float>(0);
  float* invrms_out = optional_output(c, 1);
  const float eps = static_cast<float>(p.eps);
  const float inv_width = r.width ? 1.0f / static_cast<float>(r.width) : 0.0f;
  for_rows(c, r, [&](size_t i) {
    const float* xr = x + i * r.width;
    const float invrms = 1.0f / std::sqrt(row_sum_squares(xr, 0.0f, r.width) * inv_width + eps);
    normalize(xr, 0.0f, invrms, gamma, nullptr, y + i * r.width, r.width);
    if (invrms_out) invrms_out[i] = invrms;
  });
  return Status::ok();
}

}  // namespace

void register_norm(KernelTable& t) {
  using P = params::AxisNormParams;
  t.add(typed_kernel<P, layer_norm>("LayerNorm", DType::kF32, kCpuScore, row_norm_accepts));
  t.add(typed_kernel<P, rms_norm>("RMSNorm", DType::kF32, kCpuScore, row_norm_accepts));
}

}  // namespace pock::cpu
