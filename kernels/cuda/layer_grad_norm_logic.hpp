// Per-row, per-channel and per-column logic of the CUDA norm backward ops (layer_grad_norm.cu),
// shared with the host tests (tests/cuda_logic). With xhat = (x - mean) * invstd over M values
// and g = gamma (1 when absent), as in kernels/ref/layer_grad_norm.cpp:
//   dbeta = sum(dy), dgamma = sum(dy * xhat),
//   dx = invstd * (g dy - mean(g dy) - xhat * mean(g dy * xhat))     (batch and layer norm)
//   RMSNorm: dx = r g dy - x r^3 mean(g dy x), dgamma = sum(dy x r)
//   SoftmaxGrad: y (dy - sum(dy y)); LogSoftmaxGrad: dy - exp(y) sum(dy).
// Row and channel functors run as f(team, index) on every participant (row_team.hpp); the column
// terms (dgamma, dbeta of the row norms: sums over rows) as terms(row, column, out) per element,
// summed by column_sum.cuh on the device and by a plain loop on the host.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/norm_logic.hpp"

namespace pock::cuda {

// LayerNormGrad's dx, a team per row of `features` values.
struct LayerNormGradRow {
  const float* dy;
  const float* x;
  const float* mean;
  const float* invstd;
  const float* gamma;
  float* dx;
  int64_t features;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const int64_t base = row * features;
    const float m = mean[row], s = invstd[row];
    float sum_gdy = 0.0f, sum_gdy_xhat = 0.0f;
    for_lanes(team, features, [&](int64_t j) {
      const float gdy = gamma_at(gamma, j) * dy[base + j];
      sum_gdy += gdy;
      sum_gdy_xhat += gdy * (x[base + j] - m) * s;
    });
    const float n = static_cast<float>(features);
    const float mean_gdy = team.sum(sum_gdy) / n, mean_gdy_xhat = team.sum(sum_gdy_xhat) / n;
    for_lanes(team, features, [&](int64_t j) {
      const float gdy = gamma_at(gamma, j) * dy[base + j];
      dx[base + j] = s * (gdy - mean_gdy - (x[base + j] - m) * s * mean_gdy_xhat);
    });
  }
};

// LayerNormGrad's column terms: dgamma (dy * xhat) and dbeta (dy).
struct LayerNormGradColumns {
  static constexpr int kTerms = 2;
  const float* dy;
  const float* x;
  const float* mean;
  const float* invstd;
  int64_t features;
  POCK_HD void operator()(int64_t row, int64_t j, float* terms) const {
    const int64_t i = row * features + j;
    terms[0] = dy[i] * (x[i] - mean[row]) * invstd[row];
    terms[1] = dy[i];
  }
};

// RMSNormGrad's dx, a team per row.
struct RmsNormGradRow {
  const float* dy;
  const float* x;
  const float* invrms;
  const float* gamma;
  float* dx;
  int64_t features;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const int64_t base = row * features;
    const float r = invrms[row];
    float sum_gdy_x = 0.0f;
    for_lanes(team, features, [&](int64_t j) { sum_gdy_x += gamma_at(gamma, j) * dy[base + j] * x[base + j]; });
    const float mean_gdy_x = team.sum(sum_gdy_x) / static_cast<float>(features);
    const float r3_mean = r * r * r * mean_gdy_x;
    for_lanes(team, features,
              [&](int64_t j) { dx[base + j] = r * gamma_at(gamma, j) * dy[base + j] - x[base + j] * r3_mean; });
  }
};

// RMSNormGrad's column term: dgamma (dy * x * invrms).
struct RmsNormGradColumns {
  static constexpr int kTerms = 1;
  const float* dy;
  const float* x;
  const float* invrms;
  int64_t features;
  POCK_HD void operator()(int64_t row, int64_t j, float* terms) const {
    const int64_t i = row * features + j;
    terms[0] = dy[i] * x[i] * invrms[row];
  }
};

// SoftmaxGrad (kLog false) and LogSoftmaxGrad along the axis (rows as in SoftmaxRow).
template <bool kLog>
struct SoftmaxGradRow {
  const float* dy;
  const float* y;
  float* dx;
  AxisRows rows;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t row) const {
    const int64_t base = rows.first(row), stride = rows.inner, n = rows.extent;
    float sum = 0.0f;
    for_lanes(team, n, [&](int64_t k) {
      const int64_t i = base + k * stride;
      sum += kLog ? dy[i] : dy[i] * y[i];
    });
    sum = team.sum(sum);
    for_lanes(team, n, [&](int64_t k) {
      const int64_t i = base + k * stride;
      dx[i] = kLog ? dy[i] - expf(y[i]) * sum : y[i] * (dy[i] - sum);
    });
  }
};

// BatchNormTrainGrad (dx wanted) and BatchNormParamGrad (dx null): a team per channel sums dy and
// dy * xhat, writes dgamma and dbeta, then dx.
struct BatchNormGradChannel {
  const float* dy;
  const float* x;
  const float* mean;
  const float* invstd;
  const float* gamma;
  float* dx;
  float* dgamma;
  float* dbeta;
  ChannelView view;

  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t ch) const {
    const int64_t count = view.count();
    const float m = mean[ch], s = invstd[ch];
    float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
    view.for_each(team, ch, [&](int64_t i) {
      sum_dy += dy[i];
      sum_dy_xhat += dy[i] * (x[i] - m) * s;
    });
    sum_dy = team.sum(sum_dy);
    sum_dy_xhat = team.sum(sum_dy_xhat);
    if (team.lane == 0) {
      dgamma[ch] = sum_dy_xhat;
      dbeta[ch] = sum_dy;
    }
    if (!dx) return;
    const float scale = gamma_at(gamma, ch) * s;
    const float mean_dy = sum_dy / static_cast<float>(count), mean_dy_xhat = sum_dy_xhat / static_cast<float>(count);
    view.for_each(team, ch, [&](int64_t i) { dx[i] = scale * (dy[i] - mean_dy - (x[i] - m) * s * mean_dy_xhat); });
  }
};

}  // namespace pock::cuda
