// Per-row and per-channel logic of the CUDA norm family (LayerNorm, RMSNorm, Softmax, LogSoftmax,
// BatchNorm, BatchNormTrain), shared by the device kernels (norm.cu, a warp or block per row) and
// the host tests (tests/cuda_logic, one SoloTeam per row), which compare it with kernels/ref.
// Each functor is called as f(team, row) by every participant of the row's team (row_team.hpp).
// f32 throughout, statistics in two passes (mean, then squared deviations) like ref, so a large
// offset does not cancel.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cuda/activation_epilogue.hpp"
#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/row_team.hpp"

namespace pock::cuda {

// 1 / sqrt(mean + eps), the empty row's mean being 0 (ref).
POCK_HD float inverse_root(float sum, int64_t count, float eps) {
  const float mean = count > 0 ? sum / static_cast<float>(count) : 0.0f;
  return 1.0f / sqrtf(mean + eps);
}

// gamma[j], or 1 where the op has no gamma.
POCK_HD float gamma_at(const float* gamma, int64_t j) { return gamma ? gamma[j] : 1.0f; }

// LayerNorm over rows of `features` contiguous values; gamma, beta and the statistics optional.
struct LayerNormRow {
  const float* x;
  const float* gamma;
  const float* beta;
  float* y;
  float* mean_out;
  float* invstd_out;
  int64_t features;
  float eps;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const float* xr = x + row * features;
    float* yr = y + row * features;
    float sum = 0.0f;
    for_lanes(team, features, [&](int64_t j) { sum += xr[j]; });
    const float mean = features > 0 ? team.sum(sum) / static_cast<float>(features) : 0.0f;
    float squares = 0.0f;
    for_lanes(team, features, [&](int64_t j) { squares += (xr[j] - mean) * (xr[j] - mean); });
    const float invstd = inverse_root(team.sum(squares), features, eps);
    for_lanes(team, features, [&](int64_t j) {
      float out = (xr[j] - mean) * invstd;
      if (gamma) out *= gamma[j];
      if (beta) out += beta[j];
      yr[j] = out;
    });
    if (team.lane == 0 && mean_out) mean_out[row] = mean;
    if (team.lane == 0 && invstd_out) invstd_out[row] = invstd;
  }
};

// RMSNorm: y = x / sqrt(mean(x^2) + eps) * gamma.
struct RmsNormRow {
  const float* x;
  const float* gamma;
  float* y;
  float* invrms_out;
  int64_t features;
  float eps;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const float* xr = x + row * features;
    float* yr = y + row * features;
    float squares = 0.0f;
    for_lanes(team, features, [&](int64_t j) { squares += xr[j] * xr[j]; });
    const float invrms = inverse_root(team.sum(squares), features, eps);
    for_lanes(team, features, [&](int64_t j) { yr[j] = xr[j] * invrms * gamma_at(gamma, j); });
    if (team.lane == 0 && invrms_out) invrms_out[row] = invrms;
  }
};

// A tensor seen as [outer, extent, inner] around an axis: row r is the `extent` values at
// first(r) + k * inner. With inner == 1 rows are contiguous (a team per row); otherwise a thread
// per row keeps neighbouring threads on neighbouring addresses.
struct AxisRows {
  int64_t extent, inner;
  POCK_HD int64_t first(int64_t row) const { return (row / inner) * extent * inner + row % inner; }
};

// Softmax (kLog false) and LogSoftmax along the axis. Subtracting the maximum keeps exp() finite
// and the sum >= 1, so the log is safe; NaN propagates through fmaxf's partner, exp and the sum.
template <bool kLog>
struct SoftmaxRow {
  const float* x;
  float* y;
  AxisRows rows;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const int64_t base = rows.first(row), stride = rows.inner, n = rows.extent;
    float top = -INFINITY;
    for_lanes(team, n, [&](int64_t k) { top = fmaxf(top, x[base + k * stride]); });
    top = team.max(top);
    float sum = 0.0f;
    for_lanes(team, n, [&](int64_t k) { sum += expf(x[base + k * stride] - top); });
    sum = team.sum(sum);
    const float log_sum = logf(sum), inverse_sum = 1.0f / sum;
    for_lanes(team, n, [&](int64_t k) {
      const float shifted = x[base + k * stride] - top;
      y[base + k * stride] = kLog ? shifted - log_sum : expf(shifted) * inverse_sum;
    });
  }
};

// BatchNorm (inference), element-wise: y = (x - mean) * gamma / sqrt(var + eps) + beta.
struct BatchNormElement {
  const float* x;
  const float* gamma;
  const float* beta;
  const float* mean;
  const float* var;
  float* y;
  int64_t channels, inner;
  float eps;
  Activation activation;

  POCK_HD void operator()(int64_t i) const {
    const int64_t ch = (i / inner) % channels;
    const float scale = gamma[ch] / sqrtf(var[ch] + eps);
    y[i] = activate(activation, x[i] * scale + (beta[ch] - mean[ch] * scale));
  }
};

// BatchNormTrain, a team per channel: normalizes with the batch statistics, saves mean and
// invstd, and moves the running statistics by `momentum` (unbiased variance, as PyTorch).
struct BatchNormTrainChannel {
  const float* x;
  const float* gamma;
  const float* beta;
  float* running_mean;
  float* running_var;
  float* y;
  float* saved_mean;
  float* saved_invstd;
  ChannelView view;
  float eps, momentum;
  Activation activation;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t ch) const {
    const int64_t count = view.count();
    float sum = 0.0f;
    view.for_each(team, ch, [&](int64_t i) { sum += x[i]; });
    const float mean = team.sum(sum) / static_cast<float>(count);
    float squares = 0.0f;
    view.for_each(team, ch, [&](int64_t i) { squares += (x[i] - mean) * (x[i] - mean); });
    const float var = team.sum(squares) / static_cast<float>(count);  // biased: what normalizes the batch
    const float invstd = 1.0f / sqrtf(var + eps);
    view.for_each(team, ch,
                  [&](int64_t i) { y[i] = activate(activation, (x[i] - mean) * invstd * gamma[ch] + beta[ch]); });
    if (team.lane == 0) {
      saved_mean[ch] = mean;
      saved_invstd[ch] = invstd;
      const float unbiased = var * static_cast<float>(count) / static_cast<float>(count - 1);
      running_mean[ch] = (1.0f - momentum) * running_mean[ch] + momentum * mean;
      running_var[ch] = (1.0f - momentum) * running_var[ch] + momentum * unbiased;
    }
  }
};

}  // namespace pock::cuda
