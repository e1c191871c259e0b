// LayerNorm and RMSNorm with NEON: the normalized dims x.shape[axis:] are contiguous, so every
// axis is a set of rows; each row takes a pass for the mean (LayerNorm), a centered pass for the
// variance (E[x^2] - E[x]^2 cancels when the mean is large next to the spread) and a pass that
// writes y. gamma and beta are optional; so are the saved statistics.
#include <arm_neon.h>

#include <cmath>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"
#include "kernels/params/norm.hpp"

namespace pock::neon {
namespace {

struct Rows {
  int64_t rows = 0, width = 0;
};

Rows rows_of(const pock_tensor_desc& x, const params::AxisNormParams& p) {
  const params::RowSplit split = p.rows(x);
  return {split.rows, split.features};
}

// By the op's shared parser; false when its attributes are invalid (prepare then says why).
bool rows_of(const pock_op_desc& op, Rows* r) {
  params::AxisNormParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  *r = rows_of(op.inputs[0], p);
  return true;
}

bool row_norm_accepts(const pock_op_desc& op) {
  Rows r;
  if (op.num_inputs < 1 || op.num_outputs < 1 || !rows_of(op, &r)) return false;
  for (int i = 0; i < op.num_inputs; ++i) {
    const pock_tensor_desc& t = op.inputs[i];
    if (!cpu::is_present(t)) continue;
    if (!cpu::is_f32(t)) return false;
    if (i > 0 && numel(t) != r.width) return false;  // gamma, beta: one value per normalized element
  }
  for (int i = 0; i < op.num_outputs; ++i) {
    if (!cpu::is_f32(op.outputs[i])) return false;
  }
  return numel(op.outputs[0]) == numel(op.inputs[0]);
}

// Sum of (x - center)^2 (center 0: of x^2).
float sum_squared_deviation(const float* x, float center, int64_t n) {
  const float32x4_t c = vdupq_n_f32(center);
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t d = vsubq_f32(vld1q_f32(x + i), c);
    acc = vfmaq_f32(acc, d, d);
  }
  float s = vaddvq_f32(acc);
  for (; i < n; ++i) s += (x[i] - center) * (x[i] - center);
  return s;
}

float sum(const float* x, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = vaddq_f32(acc, vld1q_f32(x + i));
  float s = vaddvq_f32(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

// y = (x - center) * scale * gamma + beta; gamma and beta may be null.
void normalize(const float* x, float center, float scale, const float* gamma, const float* beta, float* y, int64_t n) {
  const float32x4_t c = vdupq_n_f32(center), s = vdupq_n_f32(scale);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x4_t v = vmulq_f32(vsubq_f32(vld1q_f32(x + i), c), s);
    if (gamma) v = vmulq_f32(v, vld1q_f32(gamma + i));
    if (beta) v = vaddq_f32(v, vld1q_f32(beta + i));
    vst1q_f32(y + i, v);
  }
  for (; i < n; ++i) y[i] = (x[i] - center) * scale * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
}

const float* optional_input(const KernelCall& c, int i) {
  return i < c.num_inputs() && c.has_input(i) ? c.in_data<float>(i) : nullptr;
}
float* optional_output(const KernelCall& c, int i) { return c.num_outputs() > i ? c.out_data<float>(i) : nullptr; }

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
  for (int64_t i = 0; i < r.rows; ++i) {
    const float* xr = x + i * r.width;
    const float mean = sum(xr, r.width) * inv_width;
    const float invstd = 1.0f / std::sqrt(sum_squared_deviation(xr, mean, r.width) * inv_width + eps);
    normalize(xr, mean, invstd, gamma, beta, y + i * r.width, r.width);
    if (mean_out) mean_out[i] = mean;
    if (invstd_out) invstd_out[i] = invstd;
  }
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
  for (int64_t i = 0; i < r.rows; ++i) {
    const float* xr = x + i * r.width;
    const float invrms = 1.0f / std::sqrt(sum_squared_deviation(xr, 0.0f, r.width) * inv_width + eps);
    normalize(xr, 0.0f, invrms, gamma, nullptr, y + i * r.width, r.width);
    if (invrms_out) invrms_out[i] = invrms;
  }
  return Status::ok();
}

}  // namespace

void register_norm(KernelTable& t) {
  using P = params::AxisNormParams;
  t.add(typed_kernel<P, layer_norm>("LayerNorm", DType::kF32, kNeonScore, row_norm_accepts));
  t.add(typed_kernel<P, rms_norm>("RMSNorm", DType::kF32, kNeonScore, row_norm_accepts));
}

}  // namespace pock::neon
