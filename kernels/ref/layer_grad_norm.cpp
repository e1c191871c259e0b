// Reference kernels of the norm backward ops (f32, sums in double). With xhat = (x - mean) * invstd
// normalized over M elements and g = gamma (1 when absent), the gradients are
//   dbeta = sum(dy), dgamma = sum(dy * xhat),
//   dx = invstd * (g dy - mean(g dy) - xhat * mean(g dy * xhat))      (batch and layer norm)
// and for RMSNorm (y = x * r * g, r = 1 / sqrt(mean(x^2) + eps))
//   dx = r * g dy - x * r^3 * mean(g dy * x),  dgamma = sum(dy * x * r).
#include <cmath>

#include "kernels/params/norm.hpp"
#include "kernels/ref/layer_grad.hpp"

namespace pock {
namespace {

// x [N, C, ...] seen as [N, C, inner].
struct ChannelLayout {
  int64_t batch, channels, inner;
};

ChannelLayout channel_layout(const pock_tensor_desc& x) {
  ChannelLayout l{x.dims[0], x.dims[1], 1};
  for (int i = 2; i < x.rank; ++i) l.inner *= x.dims[i];
  return l;
}

// Per-channel sums of dy and dy * xhat.
struct ChannelSums {
  double dy = 0.0, dy_xhat = 0.0;
};

ChannelSums channel_sums(const ChannelLayout& l, int64_t ch, const float* dy, const float* x, double mean,
                         double invstd) {
  ChannelSums s;
  for (int64_t n = 0; n < l.batch; ++n) {
    const int64_t base = (n * l.channels + ch) * l.inner;
    for (int64_t i = 0; i < l.inner; ++i) {
      s.dy += dy[base + i];
      s.dy_xhat += static_cast<double>(dy[base + i]) * (x[base + i] - mean) * invstd;
    }
  }
  return s;
}

// BatchNormTrainGrad(dy, x, saved_mean, saved_invstd, gamma?) -> dx, dgamma, dbeta.
Status batch_norm_train_grad(const KernelCall& c) {
  const ChannelLayout l = channel_layout(c.in(1));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  const float* gamma = c.has_input(4) ? c.in_data<float>(4) : nullptr;
  float* dx = c.out_data<float>(0);
  float* dgamma = c.out_data<float>(1);
  float* dbeta = c.out_data<float>(2);
  const double count = static_cast<double>(l.batch * l.inner);
  for (int64_t ch = 0; ch < l.channels; ++ch) {
    const ChannelSums s = channel_sums(l, ch, dy, x, mean[ch], invstd[ch]);
    dgamma[ch] = static_cast<float>(s.dy_xhat);
    dbeta[ch] = static_cast<float>(s.dy);
    const double scale = (gamma ? gamma[ch] : 1.0) * invstd[ch];
    for (int64_t n = 0; n < l.batch; ++n) {
      const int64_t base = (n * l.channels + ch) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i) {
        const double xhat = (x[base + i] - static_cast<double>(mean[ch])) * invstd[ch];
        dx[base + i] = static_cast<float>(scale * (dy[base + i] - s.dy / count - xhat * s.dy_xhat / count));
      }
    }
  }
  return Status::ok();
}

// BatchNormParamGrad(dy, x, mean, invstd) -> dgamma, dbeta.
Status batch_norm_param_grad(const KernelCall& c) {
  const ChannelLayout l = channel_layout(c.in(1));
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  for (int64_t ch = 0; ch < l.channels; ++ch) {
    const ChannelSums s = channel_sums(l, ch, c.in_data<float>(0), c.in_data<float>(1), mean[ch], invstd[ch]);
    c.out_data<float>(0)[ch] = static_cast<float>(s.dy_xhat);
    c.out_data<float>(1)[ch] = static_cast<float>(s.dy);
  }
  return Status::ok();
}

// x seen as [rows, features]; the statistics have one value per row.
struct RowLayout {
  int64_t rows, features;
};

RowLayout row_layout(const KernelCall& c) {
  const int64_t features = numel(c.out(1));  // dgamma has the normalized (trailing) shape
  return {features > 0 ? numel(c.in(1)) / features : 0, features};
}

// LayerNormGrad(dy, x, mean, invstd, gamma?) -> dx, dgamma, dbeta.
Status layer_norm_grad(const KernelCall& c) {
  const RowLayout l = row_layout(c);
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  const float* gamma = c.has_input(4) ? c.in_data<float>(4) : nullptr;
  float* dx = c.out_data<float>(0);
  auto xhat = [&](int64_t r, int64_t j) { return (x[r * l.features + j] - static_cast<double>(mean[r])) * invstd[r]; };
  auto g = [&](int64_t j) { return gamma ? static_cast<double>(gamma[j]) : 1.0; };

  for (int64_t r = 0; r < l.rows; ++r) {
    double sum_gdy = 0.0, sum_gdy_xhat = 0.0;
    for (int64_t j = 0; j < l.features; ++j) {
      const double gdy = g(j) * dy[r * l.features + j];
      sum_gdy += gdy;
      sum_gdy_xhat += gdy * xhat(r, j);
    }
    const double n = static_cast<double>(l.features);
    for (int64_t j = 0; j < l.features; ++j) {
      const double gdy = g(j) * dy[r * l.features + j];
      dx[r * l.features + j] = static_cast<float>(invstd[r] * (gdy - sum_gdy / n - xhat(r, j) * sum_gdy_xhat / n));
    }
  }
  for (int64_t j = 0; j < l.features; ++j) {
    double dgamma = 0.0, dbeta = 0.0;
    for (int64_t r = 0; r < l.rows; ++r) {
      dgamma += dy[r * l.features + j] * xhat(r, j);
      dbeta += dy[r * l.features + j];
    }
    c.out_data<float>(1)[j] = static_cast<float>(dgamma);
    c.out_data<float>(2)[j] = static_cast<float>(dbeta);
  }
  return Status::ok();
}

// RMSNormGrad(dy, x, invrms, gamma?) -> dx, dgamma.
Status rms_norm_grad(const KernelCall& c) {
  const RowLayout l = row_layout(c);
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* invrms = c.in_data<float>(2);
  const float* gamma = c.has_input(3) ? c.in_data<float>(3) : nullptr;
  float* dx = c.out_data<float>(0);
  auto g = [&](int64_t j) { return gamma ? static_cast<double>(gamma[j]) : 1.0; };

  for (int64_t r = 0; r < l.rows; ++r) {
    const double inv = invrms[r];
    double sum_gdy_x = 0.0;
    for (int64_t j = 0; j < l.features; ++j) sum_gdy_x += g(j) * dy[r * l.features + j] * x[r * l.features + j];
    const double mean_gdy_x = sum_gdy_x / static_cast<double>(l.features);
    for (int64_t j = 0; j < l.features; ++j) {
      const int64_t i = r * l.features + j;
      dx[i] = static_cast<float>(inv * g(j) * dy[i] - x[i] * inv * inv * inv * mean_gdy_x);
    }
  }
  for (int64_t j = 0; j < l.features; ++j) {
    double dgamma = 0.0;
    for (int64_t r = 0; r < l.rows; ++r) {
      dgamma += static_cast<double>(dy[r * l.features + j]) * x[r * l.features + j] * invrms[r];
    }
    c.out_data<float>(1)[j] = static_cast<float>(dgamma);
  }
  return Status::ok();
}

// A tensor seen as [outer, extent, inner] around the softmax axis.
struct AxisLayout {
  int64_t outer = 1, extent = 1, inner = 1;
};

AxisLayout axis_layout(const KernelCall& c, const params::AxisNormParams& p) {
  const params::AxisSplit s = p.around(c.in(1));
  return {s.outer, s.extent, s.inner};
}

// SoftmaxGrad(dy, y) -> y * (dy - sum(dy * y)); LogSoftmaxGrad(dy, y) -> dy - exp(y) * sum(dy).
template <bool kLog>
Status softmax_grad(const KernelCall& c, const params::AxisNormParams& p) {
  const AxisLayout l = axis_layout(c, p);
  const float* dy = c.in_data<float>(0);
  const float* y = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t in = 0; in < l.inner; ++in) {
      const int64_t base = o * l.extent * l.inner + in;
      double sum = 0.0;
      for (int64_t k = 0; k < l.extent; ++k) {
        const int64_t i = base + k * l.inner;
        sum += kLog ? static_cast<double>(dy[i]) : static_cast<double>(dy[i]) * y[i];
      }
      for (int64_t k = 0; k < l.extent; ++k) {
        const int64_t i = base + k * l.inner;
        dx[i] = static_cast<float>(kLog ? dy[i] - std::exp(static_cast<double>(y[i])) * sum : y[i] * (dy[i] - sum));
      }
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_norm_grad(KernelTable& t) {
  t.add({"BatchNormTrainGrad", DType::kF32, batch_norm_train_grad});
  t.add({"BatchNormParamGrad", DType::kF32, batch_norm_param_grad});
  t.add({"LayerNormGrad", DType::kF32, layer_norm_grad});
  t.add({"RMSNormGrad", DType::kF32, rms_norm_grad});
  t.add(typed_kernel<params::AxisNormParams, softmax_grad<false>>("SoftmaxGrad", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax_grad<true>>("LogSoftmaxGrad", DType::kF32));
}

}  // namespace pock
