#include "kernels/cpu/optimizer_steps.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinParallelElements = size_t{1} << 15;
// Sums of squares are taken in f32 lanes over pieces this long, the pieces added in double.
constexpr int64_t kPiece = int64_t{1} << 12;

bool same_elements(const pock_tensor_desc& a, const pock_tensor_desc& b) {
  return is_f32(a) && is_f32(b) && numel(a) == numel(b);
}

// Optimizer state covers what the gradient (input 1) covers: under a partial-channel update, the
// parameter's leading rows only.
bool optional_state_fits(const pock_op_desc& op, int i) {
  return i >= op.num_inputs || !is_present(op.inputs[i]) || same_elements(op.inputs[i], op.inputs[1]);
}

bool optional_scalar_fits(const pock_op_desc& op, int i) {
  return i >= op.num_inputs || !is_present(op.inputs[i]) || (is_f32(op.inputs[i]) && numel(op.inputs[i]) == 1);
}

// The gradient is the parameter's shape, or its leading rows (partial-channel update): the update
// then covers the parameter's first numel(gradient) elements.
bool update_fits(const pock_op_desc& op) {
  return op.num_inputs >= 3 && is_f32(op.inputs[0]) && is_f32(op.inputs[1]) &&
         numel(op.inputs[1]) <= numel(op.inputs[0]) && op.inputs[2].dtype == POCK_I64 && numel(op.inputs[2]) == 1;
}

const float* optional_input(const KernelCall& c, int i) {
  return i < c.num_inputs() && c.has_input(i) ? c.in_data<float>(i) : nullptr;
}

// Which update this train step performs: 0 on the micro-batches that only accumulate.
int64_t update_index(const KernelCall& c) {
  const int64_t step = *c.in_data<int64_t>(2);  // 1-based: the runtime advances it before the step
  const int64_t k = c.attr_int("accumulation", 1);
  return step > 0 && step % k == 0 ? step / k : 0;
}

// Learning rate of update u (1-based), as ref/training.cpp: linear_warmup ramps to lr over
// warmup_steps; cosine warms up the same way, then decays along half a cosine to min_lr at
// total_steps.
double scheduled_lr(const KernelCall& c, int64_t u) {
  const double lr = c.attr_float("lr", 0.01);
  const std::string_view type = c.attr_string("schedule", "constant");
  if (type == "constant") return lr;
  const int64_t warmup = c.attr_int("warmup_steps", 0);
  if (u <= warmup) return lr * static_cast<double>(u) / static_cast<double>(warmup);
  if (type == "linear_warmup") return lr;
  const int64_t total = c.attr_int("total_steps", 0);
  const double min_lr = c.attr_float("min_lr", 0.0);
  const double span = static_cast<double>(std::max<int64_t>(1, total - warmup - 1));
  const double progress = std::fmin(1.0, static_cast<double>(u - warmup - 1) / span);
  return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

// The accumulator's mean over micro-batches, times the clip factor when there is one.
float gradient_scale(const KernelCall& c, int clip_input) {
  const double k = static_cast<double>(c.attr_int("accumulation", 1));
  const float* clip = optional_input(c, clip_input);
  return static_cast<float>((clip ? *clip : 1.0) / k);
}

template <typename ChunkFn>
void for_chunks(const KernelCall& c, int64_t count, const ChunkFn& fn) {
  const size_t n = static_cast<size_t>(count);
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4),
               [&](size_t begin, size_t end) { fn(static_cast<int64_t>(begin), static_cast<int64_t>(end - begin)); });
}

}  // namespace

bool sgd_update_accepts(const pock_op_desc& op) {
  return update_fits(op) && optional_state_fits(op, 3) && optional_scalar_fits(op, 4);
}

bool adam_update_accepts(const pock_op_desc& op) {
  return update_fits(op) && op.num_inputs >= 5 && is_present(op.inputs[3]) && is_present(op.inputs[4]) &&
         optional_state_fits(op, 3) && optional_state_fits(op, 4) && optional_scalar_fits(op, 5);
}

bool accumulate_grad_accepts(const pock_op_desc& op) {
  return op.num_inputs == 2 && same_elements(op.inputs[0], op.inputs[1]);
}

bool global_norm_clip_scale_accepts(const pock_op_desc& op) {
  for (int i = 0; i < op.num_inputs; ++i) {
    if (!is_f32(op.inputs[i])) return false;
  }
  return op.num_inputs >= 1 && op.num_outputs == 1 && is_f32(op.outputs[0]) && numel(op.outputs[0]) == 1;
}

Status run_sgd_update(const KernelCall& c, const OptimizerLoops& loops) {
  const int64_t u = update_index(c);
  if (u == 0) return Status::ok();
  SgdStep s;
  s.lr = static_cast<float>(scheduled_lr(c, u));
  s.weight_decay = static_cast<float>(c.attr_float("weight_decay", 0.0));
  s.momentum = static_cast<float>(c.attr_float("momentum", 0.0));
  s.nesterov = c.attr_int("nesterov", 0) != 0;
  s.grad_scale = gradient_scale(c, 4);
  s.zero_grad = c.attr_int("accumulation", 1) > 1;
  float* p = c.inout_data<float>(0);
  float* grad = c.inout_data<float>(1);
  float* buf = s.momentum != 0.0f && c.num_inputs() > 3 && c.has_input(3) ? c.inout_data<float>(3) : nullptr;
  for_chunks(c, numel(c.in(1)),
             [&](int64_t at, int64_t n) { loops.sgd(p + at, grad + at, buf ? buf + at : nullptr, n, s); });
  return Status::ok();
}

Status run_adam_update(const KernelCall& c, const OptimizerLoops& loops) {
  const int64_t u = update_index(c);
  if (u == 0) return Status::ok();
  const double lr = scheduled_lr(c, u);
  const double wd = c.attr_float("weight_decay", 0.0);
  const double b1 = c.attr_float("beta1", 0.9), b2 = c.attr_float("beta2", 0.999);
  const bool decoupled = c.attr_int("decoupled", 0) != 0;
  AdamStep s;
  s.beta1 = static_cast<float>(b1);
  s.beta2 = static_cast<float>(b2);
  s.eps = static_cast<float>(c.attr_float("eps", 1e-8));
  s.grad_scale = gradient_scale(c, 5);
  s.coupled_weight_decay = decoupled ? 0.0f : static_cast<float>(wd);
  s.decay = decoupled ? static_cast<float>(1.0 - lr * wd) : 1.0f;
  s.step_size = static_cast<float>(lr / (1.0 - std::pow(b1, static_cast<double>(u))));
  s.inv_bias2_sqrt = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(b2, static_cast<double>(u))));
  s.zero_grad = c.attr_int("accumulation", 1) > 1;
  float* p = c.inout_data<float>(0);
  float* grad = c.inout_data<float>(1);
  float* m = c.inout_data<float>(3);
  float* v = c.inout_data<float>(4);
  for_chunks(c, numel(c.in(1)), [&](int64_t at, int64_t n) { loops.adam(p + at, grad + at, m + at, v + at, n, s); });
  return Status::ok();
}

Status run_accumulate_grad(const KernelCall& c, const OptimizerLoops& loops) {
  float* acc = c.inout_data<float>(0);
  const float* grad = c.in_data<float>(1);
  for_chunks(c, numel(c.in(0)), [&](int64_t at, int64_t n) { loops.accumulate(acc + at, grad + at, n); });
  return Status::ok();
}

// torch.nn.utils.clip_grad_norm_: max_norm / (||grad_scale * g|| + 1e-6), clamped to 1.
Status run_global_norm_clip_scale(const KernelCall& c, const OptimizerLoops& loops) {
  const double grad_scale = c.attr_float("grad_scale", 1.0);
  double sum_sq = 0.0;
  for (int k = 0; k < c.num_inputs(); ++k) {
    const float* g = c.in_data<float>(k);
    const int64_t n = numel(c.in(k));
    for (int64_t i = 0; i < n; i += kPiece) sum_sq += loops.sum_squares(g + i, std::min(kPiece, n - i));
  }
  const double coef = c.attr_float("max_norm", 1.0) / (std::sqrt(sum_sq) * std::fabs(grad_scale) + 1e-6);
  *c.out_data<float>(0) = static_cast<float>(std::fmin(coef, 1.0));
  return Status::ok();
}

}  // namespace pock::cpu
