// Reference kernels of the training family: losses, their gradients and the optimizer updates.
// Optimizers follow PyTorch's torch.optim (SGD, Adam, AdamW); their parameters and the
// learning-rate schedule come from kernels/params/training.hpp, parsed once at prepare.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/params/training.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// ---- losses -----------------------------------------------------------------------------------

struct CrossEntropyShape {
  int64_t rows = 0, classes = 0;
};

CrossEntropyShape cross_entropy_shape(const pock_tensor_desc& logits) {
  CrossEntropyShape s;
  s.classes = logits.dims[logits.rank - 1];
  s.rows = s.classes ? numel(logits) / s.classes : 0;
  return s;
}

double log_sum_exp(const float* x, int64_t n) {
  double m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::fmax(m, static_cast<double>(x[i]));
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  return m + std::log(s);
}

// Per row: (1 - e) * (-log p[label]) + e * mean_c(-log p[c]), e = label_smoothing (PyTorch).
Status softmax_cross_entropy(const KernelCall& c, const params::CrossEntropyParams& p) {
  const float* logits = c.in_data<float>(0);
  const int64_t* labels = c.in_data<int64_t>(1);
  const CrossEntropyShape s = cross_entropy_shape(c.in(0));
  const int64_t ignore = p.ignore_index;
  const double eps = p.label_smoothing;
  int64_t n = 0;  // rows not ignored: the loss is their mean
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, s.rows, s.classes, ignore, &n));
  double total = 0.0;
  for (int64_t r = 0; r < s.rows; ++r) {
    if (labels[r] == ignore) continue;
    const float* x = logits + r * s.classes;
    const double lse = log_sum_exp(x, s.classes);
    double mean_x = 0.0;
    for (int64_t k = 0; k < s.classes; ++k) mean_x += x[k];
    mean_x /= static_cast<double>(s.classes);
    total += lse - (1.0 - eps) * x[labels[r]] - eps * mean_x;
  }
  *c.out_data<float>(0) = n ? static_cast<float>(total / static_cast<double>(n)) : 0.0f;
  return Status::ok();
}

// dlogits = dloss / n * (softmax - (1 - e) onehot(label) - e / C); ignored rows get 0.
Status softmax_cross_entropy_grad(const KernelCall& c, const params::CrossEntropyParams& p) {
  const float dloss = *c.in_data<float>(0);
  const float* logits = c.in_data<float>(1);
  const int64_t* labels = c.in_data<int64_t>(2);
  float* dx = c.out_data<float>(0);
  const CrossEntropyShape s = cross_entropy_shape(c.in(1));
  const int64_t ignore = p.ignore_index;
  const double eps = p.label_smoothing;
  int64_t n = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, s.rows, s.classes, ignore, &n));
  const double scale = n ? dloss / static_cast<double>(n) : 0.0;
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* x = logits + r * s.classes;
    float* d = dx + r * s.classes;
    if (labels[r] == ignore) {
      for (int64_t k = 0; k < s.classes; ++k) d[k] = 0.0f;
      continue;
    }
    const double lse = log_sum_exp(x, s.classes);
    for (int64_t k = 0; k < s.classes; ++k) {
      const double target = (k == labels[r] ? 1.0 - eps : 0.0) + eps / static_cast<double>(s.classes);
      d[k] = static_cast<float>(scale * (std::exp(x[k] - lse) - target));
    }
  }
  return Status::ok();
}

// NllLoss: log_prob [N, C, D...] seen as [N, C, D], a label per (n, d) at flat position n D + d.
struct NllShape {
  int64_t batch = 0, classes = 0, inner = 1;
  int64_t labels() const { return batch * inner; }
  int64_t at(int64_t r, int64_t label) const { return ((r / inner) * classes + label) * inner + r % inner; }
};

NllShape nll_shape(const pock_tensor_desc& log_prob) {
  NllShape s;
  s.batch = log_prob.dims[0];
  s.classes = log_prob.dims[1];
  for (int d = 2; d < log_prob.rank; ++d) s.inner *= log_prob.dims[d];
  return s;
}

// What both NllLoss kernels start from: the shape, the labels checked (before anything is
// written), their weights (1 without a weight input) and the summed weight of the labels counted,
// the mean's divisor.
struct NllSetup {
  NllShape shape;
  const int64_t* labels = nullptr;
  const float* weight = nullptr;
  double weight_sum = 0.0;
  double weight_of(int64_t label) const { return weight ? weight[label] : 1.0; }
  // f(r, t, w) for each label t at flat position r that is not ignored, w its weight.
  template <typename F>
  void for_each_counted(int64_t ignore, F&& f) const {
    for (int64_t r = 0; r < shape.labels(); ++r) {
      if (labels[r] != ignore) f(r, labels[r], weight_of(labels[r]));
    }
  }
};

Status nll_setup(const KernelCall& c, int first, const params::NllLossParams& p, NllSetup* out) {
  out->shape = nll_shape(c.in(first));
  out->labels = c.in_data<int64_t>(first + 1);
  out->weight = c.has_input(first + 2) ? c.in_data<float>(first + 2) : nullptr;
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, out->labels, out->shape.labels(), out->shape.classes, p.ignore_index, &counted));
  out->for_each_counted(p.ignore_index, [&](int64_t, int64_t, double w) { out->weight_sum += w; });
  return Status::ok();
}

// loss = -weight[t] log_prob[n, t, d] per label; "mean" divides the sum by the counted weight
// (0 when nothing counts: pock's losses stay finite, where ONNX's reference gives 0/0).
Status nll_loss(const KernelCall& c, const params::NllLossParams& p) {
  NllSetup u;
  POCK_RETURN_IF_ERROR(nll_setup(c, 0, p, &u));
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const bool per_label = p.reduction == params::NllLossParams::Reduction::kNone;
  if (per_label) std::fill(y, y + u.shape.labels(), 0.0f);  // ignored labels lose nothing
  double total = 0.0;
  u.for_each_counted(p.ignore_index, [&](int64_t r, int64_t t, double w) {
    const double loss = -w * x[u.shape.at(r, t)];
    if (per_label) y[r] = static_cast<float>(loss);
    total += loss;
  });
  if (p.reduction == params::NllLossParams::Reduction::kSum) *y = static_cast<float>(total);
  if (p.reduction == params::NllLossParams::Reduction::kMean) *y = u.weight_sum ? static_cast<float>(total / u.weight_sum) : 0.0f;
  return Status::ok();
}

// dlog_prob is 0 except at each counted label: -weight[t] times its share of dloss.
Status nll_loss_grad(const KernelCall& c, const params::NllLossParams& p) {
  NllSetup u;
  POCK_RETURN_IF_ERROR(nll_setup(c, 1, p, &u));
  const float* dloss = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::fill(dx, dx + numel(c.in(1)), 0.0f);
  const bool per_label = p.reduction == params::NllLossParams::Reduction::kNone;
  const double mean_scale = u.weight_sum ? 1.0 / u.weight_sum : 0.0;
  const double scale = p.reduction == params::NllLossParams::Reduction::kMean ? mean_scale : 1.0;
  u.for_each_counted(p.ignore_index, [&](int64_t r, int64_t t, double w) {
    dx[u.shape.at(r, t)] = static_cast<float>(-w * scale * dloss[per_label ? r : 0]);
  });
  return Status::ok();
}

Status mse_loss(const KernelCall& c) {
  const float* p = c.in_data<float>(0);
  const float* t = c.in_data<float>(1);
  const int64_t n = numel(c.in(0));
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += (static_cast<double>(p[i]) - t[i]) * (static_cast<double>(p[i]) - t[i]);
  *c.out_data<float>(0) = n ? static_cast<float>(total / static_cast<double>(n)) : 0.0f;
  return Status::ok();
}

Status mse_loss_grad(const KernelCall& c) {
  const double dloss = *c.in_data<float>(0);
  const float* p = c.in_data<float>(1);
  const float* t = c.in_data<float>(2);
  float* dp = c.out_data<float>(0);
  const int64_t n = numel(c.in(1));
  for (int64_t i = 0; i < n; ++i) dp[i] = static_cast<float>(dloss * 2.0 * (static_cast<double>(p[i]) - t[i]) / static_cast<double>(n));
  return Status::ok();
}

// ---- accumulation and clipping ----------------------------------------------------------------

Status accumulate_grad(const KernelCall& c) {
  float* acc = c.inout_data<float>(0);
  const float* g = c.in_data<float>(1);
  for (int64_t i = 0, n = numel(c.in(0)); i < n; ++i) acc[i] += g[i];
  return Status::ok();
}

// torch.nn.utils.clip_grad_norm_: coefficient max_norm / (total_norm + 1e-6), clamped to 1.
Status global_norm_clip_scale(const KernelCall& c, const params::ClipScaleParams& p) {
  const double grad_scale = p.grad_scale;
  double sum_sq = 0.0;
  for (int k = 0; k < c.num_inputs(); ++k) {
    const float* g = c.in_data<float>(k);
    for (int64_t i = 0, n = numel(c.in(k)); i < n; ++i) {
      const double v = g[i] * grad_scale;
      sum_sq += v * v;
    }
  }
  const double coef = p.max_norm / (std::sqrt(sum_sq) + 1e-6);
  *c.out_data<float>(0) = static_cast<float>(std::fmin(coef, 1.0));
  return Status::ok();
}

// ---- optimizer updates ------------------------------------------------------------------------

// The clip factor of an update (GlobalNormClipScale's output), 1 without clipping.
float clip_factor(const KernelCall& c, int clip_input) {
  return c.num_inputs() > clip_input && c.has_input(clip_input) ? *c.in_data<float>(clip_input) : 1.0f;
}

// torch.optim.SGD (dampening 0): g += wd p; buf = momentum buf + g; g = nesterov ? g + momentum
// buf : buf; p -= lr g. A zero-initialized buffer makes the first step buf = g, as in PyTorch.
Status sgd_update(const KernelCall& c, const params::SgdUpdateParams& h) {
  const int64_t u = h.update_index(*c.in_data<int64_t>(2));
  if (u == 0) return Status::ok();
  float* p = c.inout_data<float>(0);
  float* grad = c.inout_data<float>(1);
  float* buf = c.num_inputs() > 3 && c.has_input(3) ? c.inout_data<float>(3) : nullptr;
  const float lr = static_cast<float>(h.schedule.at(u));
  const float wd = static_cast<float>(h.weight_decay);
  const float momentum = static_cast<float>(h.momentum);
  const bool nesterov = h.nesterov;
  const float scale = h.gradient_scale(clip_factor(c, 4));
  const bool accumulator = h.zeroes_gradient();
  // numel(gradient): a partial-channel gradient covers only the parameter's leading rows.
  for (int64_t i = 0, n = numel(c.in(1)); i < n; ++i) {
    float g = grad[i] * scale;
    if (wd != 0.0f) g += wd * p[i];
    if (momentum != 0.0f && buf) {
      buf[i] = momentum * buf[i] + g;
      g = nesterov ? g + momentum * buf[i] : buf[i];
    }
    p[i] -= lr * g;
    if (accumulator) grad[i] = 0.0f;  // the next micro-batch starts a fresh sum
  }
  return Status::ok();
}

// torch.optim.Adam / AdamW: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p -= lr / (1 - b1^u) * m / (sqrt(v) / sqrt(1 - b2^u) + eps). Adam adds wd p to g; AdamW
// (decoupled=1) first scales p by 1 - lr wd.
Status adam_update(const KernelCall& c, const params::AdamUpdateParams& h) {
  const int64_t u = h.update_index(*c.in_data<int64_t>(2));
  if (u == 0) return Status::ok();
  float* p = c.inout_data<float>(0);
  float* grad = c.inout_data<float>(1);
  float* m = c.inout_data<float>(3);
  float* v = c.inout_data<float>(4);
  const double lr = h.schedule.at(u);
  const double wd = h.weight_decay;
  const double b1 = h.beta1, b2 = h.beta2, eps = h.eps;
  const bool decoupled = h.decoupled;
  const double bias1 = 1.0 - std::pow(b1, static_cast<double>(u));
  const double bias2_sqrt = std::sqrt(1.0 - std::pow(b2, static_cast<double>(u)));
  const float scale = h.gradient_scale(clip_factor(c, 5));
  const bool accumulator = h.zeroes_gradient();
  for (int64_t i = 0, n = numel(c.in(1)); i < n; ++i) {  // the gradient's rows, as in sgd_update
    double g = static_cast<double>(grad[i] * scale);
    double w = p[i];
    if (wd != 0.0) {
      if (decoupled) w *= 1.0 - lr * wd;
      else g += wd * w;
    }
    m[i] = static_cast<float>(b1 * m[i] + (1.0 - b1) * g);
    v[i] = static_cast<float>(b2 * v[i] + (1.0 - b2) * g * g);
    const double denom = std::sqrt(static_cast<double>(v[i])) / bias2_sqrt + eps;
    p[i] = static_cast<float>(w - lr / bias1 * static_cast<double>(m[i]) / denom);
    if (accumulator) grad[i] = 0.0f;
  }
  return Status::ok();
}

}  // namespace

void register_ref_training(KernelTable& t) {
  t.add(typed_kernel<params::CrossEntropyParams, softmax_cross_entropy>("SoftmaxCrossEntropy", DType::kF32));
  t.add(typed_kernel<params::CrossEntropyParams, softmax_cross_entropy_grad>("SoftmaxCrossEntropyGrad", DType::kF32));
  t.add({"MseLoss", DType::kF32, mse_loss});
  t.add(typed_kernel<params::NllLossParams, nll_loss>("NllLoss", DType::kF32));
  t.add(typed_kernel<params::NllLossParams, nll_loss_grad>("NllLossGrad", DType::kF32));
  t.add({"MseLossGrad", DType::kF32, mse_loss_grad});
  t.add({"AccumulateGrad", DType::kF32, accumulate_grad});
  t.add(typed_kernel<params::ClipScaleParams, global_norm_clip_scale>("GlobalNormClipScale", DType::kF32));
  t.add(typed_kernel<params::SgdUpdateParams, sgd_update>("SgdUpdate", DType::kF32));
  t.add(typed_kernel<params::AdamUpdateParams, adam_update>("AdamUpdate", DType::kF32));
}

}  // namespace pock
