// Reference kernels of the norm family: BatchNorm (inference), BatchNormTrain, LayerNorm, RMSNorm,
// Softmax and LogSoftmax. f32 in and out; statistics in double, two passes (mean, then squared
// deviations) so that large offsets do not cancel. The BatchNorms' fused activation is applied to
// the f32 value, as the separate Relu / Relu6 would.
#include <cmath>
#include <limits>
#include <string>

#include "kernels/axis_view.hpp"
#include "kernels/params/norm.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// ---- BatchNorm ------------------------------------------------------------------------------

Status batch_norm(const KernelCall& c, const params::BatchNormParams& p) {
  const AxisView v = view_around(c.in(0), 1);  // [N, C, spatial]
  const float* x = c.in_data<float>(0);
  const float* gamma = c.in_data<float>(1);
  const float* beta = c.in_data<float>(2);
  const float* mean = c.in_data<float>(3);
  const float* var = c.in_data<float>(4);
  float* y = c.out_data<float>(0);
  const double eps = p.eps;
  for (int64_t ch = 0; ch < v.len; ++ch) {
    const double scale = gamma[ch] / std::sqrt(static_cast<double>(var[ch]) + eps);
    const double shift = beta[ch] - mean[ch] * scale;
    for (int64_t n = 0; n < v.outer; ++n) {
      const int64_t base = (n * v.len + ch) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) {
        y[base + i] = apply_activation(p.activation, static_cast<float>(x[base + i] * scale + shift));
      }
    }
  }
  return Status::ok();
}

Status batch_norm_train(const KernelCall& c, const params::BatchNormParams& p) {
  const AxisView v = view_around(c.in(0), 1);
  const float* x = c.in_data<float>(0);
  const float* gamma = c.in_data<float>(1);
  const float* beta = c.in_data<float>(2);
  float* running_mean = c.inout_data<float>(3);
  float* running_var = c.inout_data<float>(4);
  float* y = c.out_data<float>(0);
  float* saved_mean = c.out_data<float>(1);
  float* saved_invstd = c.out_data<float>(2);
  const double eps = p.eps;
  const double momentum = p.momentum;
  const double count = static_cast<double>(v.outer * v.inner);
  if (count < 2) return c.error("training needs more than one value per channel");
  for (int64_t ch = 0; ch < v.len; ++ch) {
    double sum = 0.0;
    for (int64_t n = 0; n < v.outer; ++n) {
      const float* row = x + (n * v.len + ch) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) sum += row[i];
    }
    const double mean = sum / count;
    double sq = 0.0;
    for (int64_t n = 0; n < v.outer; ++n) {
      const float* row = x + (n * v.len + ch) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) sq += (row[i] - mean) * (row[i] - mean);
    }
    const double var = sq / count;  // biased: what normalizes the batch
    const double invstd = 1.0 / std::sqrt(var + eps);
    for (int64_t n = 0; n < v.outer; ++n) {
      const int64_t base = (n * v.len + ch) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) {
        y[base + i] = apply_activation(p.activation,
                                       static_cast<float>((x[base + i] - mean) * invstd * gamma[ch] + beta[ch]));
      }
    }
    saved_mean[ch] = static_cast<float>(mean);
    saved_invstd[ch] = static_cast<float>(invstd);
    // Running statistics track the unbiased variance (PyTorch).
    running_mean[ch] = static_cast<float>((1.0 - momentum) * running_mean[ch] + momentum * mean);
    running_var[ch] = static_cast<float>((1.0 - momentum) * running_var[ch] + momentum * var * count / (count - 1.0));
  }
  return Status::ok();
}

// ---- LayerNorm, RMSNorm ---------------------------------------------------------------------

Status layer_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const params::RowSplit v = p.rows(c.in(0));
  const float* x = c.in_data<float>(0);
  const float* gamma = c.has_input(1) ? c.in_data<float>(1) : nullptr;
  const float* beta = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  float* mean_out = c.num_outputs() > 1 ? c.out_data<float>(1) : nullptr;
  float* invstd_out = c.num_outputs() > 2 ? c.out_data<float>(2) : nullptr;
  const double eps = p.eps;
  for (int64_t r = 0; r < v.rows; ++r) {
    const float* xr = x + r * v.features;
    float* yr = y + r * v.features;
    double sum = 0.0;
    for (int64_t j = 0; j < v.features; ++j) sum += xr[j];
    const double mean = v.features ? sum / static_cast<double>(v.features) : 0.0;
    double sq = 0.0;
    for (int64_t j = 0; j < v.features; ++j) sq += (xr[j] - mean) * (xr[j] - mean);
    const double invstd = 1.0 / std::sqrt((v.features ? sq / static_cast<double>(v.features) : 0.0) + eps);
    for (int64_t j = 0; j < v.features; ++j) {
      double out = (xr[j] - mean) * invstd;
      if (gamma) out *= gamma[j];
      if (beta) out += beta[j];
      yr[j] = static_cast<float>(out);
    }
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (invstd_out) invstd_out[r] = static_cast<float>(invstd);
  }
  return Status::ok();
}

Status rms_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const params::RowSplit v = p.rows(c.in(0));
  const float* x = c.in_data<float>(0);
  const float* gamma = c.has_input(1) ? c.in_data<float>(1) : nullptr;
  float* y = c.out_data<float>(0);
  float* invrms_out = c.num_outputs() > 1 ? c.out_data<float>(1) : nullptr;
  const double eps = p.eps;
  for (int64_t r = 0; r < v.rows; ++r) {
    const float* xr = x + r * v.features;
    float* yr = y + r * v.features;
    double sq = 0.0;
    for (int64_t j = 0; j < v.features; ++j) sq += static_cast<double>(xr[j]) * xr[j];
    const double invrms = 1.0 / std::sqrt((v.features ? sq / static_cast<double>(v.features) : 0.0) + eps);
    for (int64_t j = 0; j < v.features; ++j) yr[j] = static_cast<float>(xr[j] * invrms * (gamma ? gamma[j] : 1.0f));
    if (invrms_out) invrms_out[r] = static_cast<float>(invrms);
  }
  return Status::ok();
}

// ---- Softmax, LogSoftmax --------------------------------------------------------------------

// Subtracting the max keeps exp() from overflowing; the sum is then >= 1, so log() is safe.
template <bool kLog>
Status softmax(const KernelCall& c, const params::AxisNormParams& p) {
  const AxisView v = view_around(c.in(0), static_cast<int>(p.axis));
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.len * v.inner + i;
      auto at = [&](int64_t k) { return base + k * v.inner; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < v.len; ++k) max = std::fmax(max, x[at(k)]);
      double sum = 0.0;
      for (int64_t k = 0; k < v.len; ++k) sum += std::exp(x[at(k)] - max);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < v.len; ++k) {
        const double shifted = x[at(k)] - max;
        y[at(k)] = static_cast<float>(kLog ? shifted - log_sum : std::exp(shifted) / sum);
      }
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_norm(KernelTable& t) {
  t.add(typed_kernel<params::BatchNormParams, batch_norm>("BatchNorm", DType::kF32));
  t.add(typed_kernel<params::BatchNormParams, batch_norm_train>("BatchNormTrain", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, layer_norm>("LayerNorm", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, rms_norm>("RMSNorm", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax<false>>("Softmax", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax<true>>("LogSoftmax", DType::kF32));
}

}  // namespace pock
