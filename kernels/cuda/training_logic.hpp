// The per-element and per-scalar logic of the cuda training family (training.cu), host-testable:
// tests/cuda_logic/test_training_logic.cpp runs it against kernels/ref/training.cpp. Every
// formula follows ref's, in the same precision (double where ref uses double), so that the device
// and ref differ only by the order of reductions.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

// ---- the learning-rate schedule, from the step counter (kernels/params/training.hpp) ----------

struct ScheduleLogic {
  int32_t kind = 0;  // params::LrSchedule::Kind: 0 constant, 1 linear warm-up, 2 cosine
  double lr = 0.0, min_lr = 0.0;
  int64_t warmup_steps = 0, total_steps = 0;
  int64_t accumulation = 1;

  // Which update a step performs (step is 1-based); 0 on a micro-batch that only accumulates.
  POCK_HD int64_t update_index(int64_t step) const {
    return step > 0 && step % accumulation == 0 ? step / accumulation : 0;
  }
  POCK_HD double lr_at(int64_t u) const {
    if (kind == 0) return lr;
    if (u <= warmup_steps) return lr * static_cast<double>(u) / static_cast<double>(warmup_steps);
    if (kind == 1) return lr;
    const int64_t span_steps = total_steps - warmup_steps - 1;
    const double span = static_cast<double>(span_steps > 1 ? span_steps : 1);
    const double progress = fmin(1.0, static_cast<double>(u - warmup_steps - 1) / span);
    return min_lr + (lr - min_lr) * 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
  }
  // The factor on the gradient: the clip factor over the micro-batches (UpdateParams::gradient_scale).
  POCK_HD float gradient_scale(float clip) const { return static_cast<float>(clip / static_cast<double>(accumulation)); }
};

// ---- optimizer updates: one element each -----------------------------------------------------

// torch.optim.SGD (dampening 0), as ref's sgd_update.
struct SgdElement {
  float lr = 0.0f, weight_decay = 0.0f, momentum = 0.0f, scale = 1.0f;
  bool nesterov = false, zero_gradient = false;

  POCK_HD void operator()(float* p, float* grad, float* buf, int64_t i) const {
    float g = grad[i] * scale;
    if (weight_decay != 0.0f) g += weight_decay * p[i];
    if (momentum != 0.0f && buf) {
      buf[i] = momentum * buf[i] + g;
      g = nesterov ? g + momentum * buf[i] : buf[i];
    }
    p[i] -= lr * g;
    if (zero_gradient) grad[i] = 0.0f;
  }
};

// torch.optim.Adam / AdamW (decoupled), as ref's adam_update.
struct AdamElement {
  double lr = 0.0, weight_decay = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double bias1 = 1.0, bias2_sqrt = 1.0;  // 1 - beta1^u and sqrt(1 - beta2^u)
  float scale = 1.0f;
  bool decoupled = false, zero_gradient = false;

  POCK_HD void set_update(int64_t u) {
    bias1 = 1.0 - pow(beta1, static_cast<double>(u));
    bias2_sqrt = sqrt(1.0 - pow(beta2, static_cast<double>(u)));
  }
  POCK_HD void operator()(float* p, float* grad, float* m, float* v, int64_t i) const {
    double g = static_cast<double>(grad[i] * scale);
    double w = p[i];
    if (weight_decay != 0.0) {
      if (decoupled) w *= 1.0 - lr * weight_decay;
      else g += weight_decay * w;
    }
    m[i] = static_cast<float>(beta1 * m[i] + (1.0 - beta1) * g);
    v[i] = static_cast<float>(beta2 * v[i] + (1.0 - beta2) * g * g);
    const double denom = sqrt(static_cast<double>(v[i])) / bias2_sqrt + eps;
    p[i] = static_cast<float>(w - lr / bias1 * static_cast<double>(m[i]) / denom);
    if (zero_gradient) grad[i] = 0.0f;
  }
};

// ---- losses: the terms that reductions sum, and the gradient elements ------------------------

// (p - t)^2 in double, as ref's MseLoss sums it.
POCK_HD double mse_term(float p, float t) {
  const double d = static_cast<double>(p) - t;
  return d * d;
}
// dp = dloss 2 (p - t) / n.
POCK_HD float mse_grad(double dloss, float p, float t, int64_t n) {
  return static_cast<float>(dloss * 2.0 * (static_cast<double>(p) - t) / static_cast<double>(n));
}

// The mean of the non-ignored rows' losses; 0 when every row is ignored.
POCK_HD float mean_or_zero(double total, int64_t n) {
  return n ? static_cast<float>(total / static_cast<double>(n)) : 0.0f;
}

// One row's cross-entropy from its log-sum-exp: lse - (1 - e) x[label] - e mean(x).
POCK_HD double cross_entropy_row(double lse, float x_label, double mean_x, double smoothing) {
  return lse - (1.0 - smoothing) * x_label - smoothing * mean_x;
}
// d = scale (softmax - target), target = (1 - e) onehot + e / C.
POCK_HD float cross_entropy_grad(float x, double lse, bool is_label, double smoothing, int64_t classes, double scale) {
  const double target = (is_label ? 1.0 - smoothing : 0.0) + smoothing / static_cast<double>(classes);
  return static_cast<float>(scale * (exp(static_cast<double>(x) - lse) - target));
}

// torch.nn.utils.clip_grad_norm_'s coefficient, clamped to 1.
POCK_HD float clip_coefficient(double sum_of_squares, double max_norm) {
  return static_cast<float>(fmin(max_norm / (sqrt(sum_of_squares) + 1e-6), 1.0));
}

}  // namespace pock::cuda
