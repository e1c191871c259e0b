#include "kernels/cpu/batch_norm_steps.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 13;
// Rows are summed in f32 in pieces this long; the pieces are added in double.
constexpr int64_t kPiece = int64_t{1} << 12;

// x [N, C, ...] seen as [batch, channels, inner].
struct Channels {
  int64_t batch = 0, channels = 0, inner = 1;
  int64_t count() const { return batch * inner; }
  int64_t row(int64_t n, int64_t ch) const { return (n * channels + ch) * inner; }
  int64_t stride() const { return channels * inner; }  // from a channel's row to the next image's
};

Channels channels_of(const pock_tensor_desc& x) {
  Channels l{x.dims[0], x.dims[1], dims_product(x, 2, x.rank)};
  return l;
}

// Every input and output f32, x of rank >= 2, the listed inputs (and outputs) [C].
bool shapes_fit(const pock_op_desc& op, int x_input, std::initializer_list<int> channel_inputs,
                std::initializer_list<int> channel_outputs, int x_shaped_output) {
  for (int i = 0; i < op.num_inputs; ++i) {
    if (is_present(op.inputs[i]) && !is_f32(op.inputs[i])) return false;
  }
  for (int i = 0; i < op.num_outputs; ++i) {
    if (!is_f32(op.outputs[i])) return false;
  }
  const pock_tensor_desc& x = op.inputs[x_input];
  if (x.rank < 2) return false;
  for (int i : channel_inputs) {
    if (i < op.num_inputs && is_present(op.inputs[i]) && numel(op.inputs[i]) != x.dims[1]) return false;
  }
  for (int i : channel_outputs) {
    if (i >= op.num_outputs || numel(op.outputs[i]) != x.dims[1]) return false;
  }
  return x_shaped_output < 0 || (x_shaped_output < op.num_outputs && numel(op.outputs[x_shaped_output]) == numel(x));
}

template <typename ChannelFn>
void for_channels(const KernelCall& c, const Channels& l, const ChannelFn& fn) {
  const size_t channels = static_cast<size_t>(l.channels);
  const size_t per_task =
      std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, l.count())));
  pthreadpool_t pool = channels > per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, channels, balanced_tile(pool, channels, per_task), [&](size_t begin, size_t end) {
    for (size_t ch = begin; ch < end; ++ch) fn(static_cast<int64_t>(ch));
  });
}

// Calls piece(offset, rows, length) over the channel's values in pieces of at most kPiece: whole
// rows of consecutive images (`rows` of them, Channels::stride() apart) when a row is short, else
// parts of one row.
template <typename PieceFn>
void for_pieces(const Channels& l, int64_t ch, const PieceFn& piece) {
  if (l.inner <= kPiece) {
    const int64_t rows = std::max<int64_t>(1, kPiece / std::max<int64_t>(1, l.inner));
    for (int64_t n = 0; n < l.batch; n += rows) piece(l.row(n, ch), std::min(rows, l.batch - n), l.inner);
    return;
  }
  for (int64_t n = 0; n < l.batch; ++n) {
    for (int64_t i = 0; i < l.inner; i += kPiece) piece(l.row(n, ch) + i, int64_t{1}, std::min(kPiece, l.inner - i));
  }
}

struct GradSums {
  double dy = 0.0, dy_dev = 0.0;  // sum of dy, sum of dy * (x - mean)
};

GradSums grad_sums(const Channels& l, int64_t ch, const float* dy, const float* x, float mean,
                   const BatchNormLoops& loops) {
  GradSums s;
  for_pieces(l, ch, [&](int64_t at, int64_t rows, int64_t n) {
    float sum_dy = 0.0f, sum_dy_dev = 0.0f;
    loops.grad_sums(dy + at, x + at, mean, rows, l.stride(), n, &sum_dy, &sum_dy_dev);
    s.dy += sum_dy;
    s.dy_dev += sum_dy_dev;
  });
  return s;
}

}  // namespace

bool batch_norm_accepts(const pock_op_desc& op) {
  // (x, gamma, beta, running_mean, running_var) -> y
  return op.num_inputs == 5 && op.num_outputs == 1 && shapes_fit(op, 0, {1, 2, 3, 4}, {}, 0);
}

bool batch_norm_train_accepts(const pock_op_desc& op) {
  // (x, gamma, beta, running_mean, running_var) -> y, saved_mean, saved_invstd
  return op.num_inputs == 5 && op.num_outputs == 3 && shapes_fit(op, 0, {1, 2, 3, 4}, {1, 2}, 0);
}

bool batch_norm_train_grad_accepts(const pock_op_desc& op) {
  // (dy, x, saved_mean, saved_invstd, gamma?) -> dx, dgamma, dbeta
  return op.num_inputs >= 4 && op.num_outputs == 3 && shapes_fit(op, 1, {2, 3, 4}, {1, 2}, 0) &&
         numel(op.inputs[0]) == numel(op.inputs[1]);
}

bool batch_norm_param_grad_accepts(const pock_op_desc& op) {
  // (dy, x, mean, invstd) -> dgamma, dbeta
  return op.num_inputs == 4 && op.num_outputs == 2 && shapes_fit(op, 1, {2, 3}, {0, 1}, -1) &&
         numel(op.inputs[0]) == numel(op.inputs[1]);
}

Status run_batch_norm(const KernelCall& c, const params::BatchNormParams& p, const BatchNormLoops& loops) {
  const Channels l = channels_of(c.in(0));
  const float* x = c.in_data<float>(0);
  const float* gamma = c.in_data<float>(1);
  const float* beta = c.in_data<float>(2);
  const float* mean = c.in_data<float>(3);
  const float* var = c.in_data<float>(4);
  float* y = c.out_data<float>(0);
  const double eps = p.eps;
  const Clamp clamp = clamp_of(p.activation);
  for_channels(c, l, [&](int64_t ch) {
    const float scale = static_cast<float>(gamma[ch] / std::sqrt(static_cast<double>(var[ch]) + eps));
    loops.normalize(x + l.row(0, ch), mean[ch], scale, beta[ch], clamp, y + l.row(0, ch), l.batch, l.stride(),
                    l.inner);
  });
  return Status::ok();
}

Status run_batch_norm_train(const KernelCall& c, const params::BatchNormParams& p, const BatchNormLoops& loops) {
  const Channels l = channels_of(c.in(0));
  if (l.count() < 2) return c.error("training needs more than one value per channel");
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
  const double count = static_cast<double>(l.count());
  const Clamp clamp = clamp_of(p.activation);
  for_channels(c, l, [&](int64_t ch) {
    double sum = 0.0;
    for_pieces(l, ch, [&](int64_t at, int64_t rows, int64_t n) { sum += loops.sum(x + at, rows, l.stride(), n); });
    const float mean = static_cast<float>(sum / count);
    // Centered second pass: E[x^2] - E[x]^2 cancels when the mean is large next to the spread.
    double squares = 0.0;
    for_pieces(l, ch, [&](int64_t at, int64_t rows, int64_t n) {
      squares += loops.sum_squared_deviation(x + at, mean, rows, l.stride(), n);
    });
    const double var = squares / count;  // biased: what normalizes the batch
    const double invstd = 1.0 / std::sqrt(var + eps);
    const float scale = static_cast<float>(invstd * gamma[ch]);
    loops.normalize(x + l.row(0, ch), mean, scale, beta[ch], clamp, y + l.row(0, ch), l.batch, l.stride(), l.inner);
    saved_mean[ch] = mean;
    saved_invstd[ch] = static_cast<float>(invstd);
    // Running statistics track the unbiased variance (PyTorch).
    running_mean[ch] = static_cast<float>((1.0 - momentum) * running_mean[ch] + momentum * mean);
    running_var[ch] = static_cast<float>((1.0 - momentum) * running_var[ch] + momentum * var * count / (count - 1.0));
  });
  return Status::ok();
}

Status run_batch_norm_train_grad(const KernelCall& c, const BatchNormLoops& loops) {
  const Channels l = channels_of(c.in(1));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  const float* gamma = c.num_inputs() > 4 && c.has_input(4) ? c.in_data<float>(4) : nullptr;
  float* dx = c.out_data<float>(0);
  float* dgamma = c.out_data<float>(1);
  float* dbeta = c.out_data<float>(2);
  const double count = static_cast<double>(l.count());
  for_channels(c, l, [&](int64_t ch) {
    const GradSums s = grad_sums(l, ch, dy, x, mean[ch], loops);
    dgamma[ch] = static_cast<float>(s.dy_dev * invstd[ch]);
    dbeta[ch] = static_cast<float>(s.dy);
    const double k = (gamma ? gamma[ch] : 1.0) * invstd[ch];
    const float a = static_cast<float>(k);
    const float b = count > 0 ? static_cast<float>(-k * invstd[ch] * invstd[ch] * s.dy_dev / count) : 0.0f;
    const float shift = count > 0 ? static_cast<float>(-k * s.dy / count) : 0.0f;
    loops.combine(dy + l.row(0, ch), x + l.row(0, ch), mean[ch], a, b, shift, dx + l.row(0, ch), l.batch, l.stride(),
                  l.inner);
  });
  return Status::ok();
}

Status run_batch_norm_param_grad(const KernelCall& c, const BatchNormLoops& loops) {
  const Channels l = channels_of(c.in(1));
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  float* dgamma = c.out_data<float>(0);
  float* dbeta = c.out_data<float>(1);
  for_channels(c, l, [&](int64_t ch) {
    const GradSums s = grad_sums(l, ch, c.in_data<float>(0), c.in_data<float>(1), mean[ch], loops);
    dgamma[ch] = static_cast<float>(s.dy_dev * invstd[ch]);
    dbeta[ch] = static_cast<float>(s.dy);
  });
  return Status::ok();
}

}  // namespace pock::cpu
