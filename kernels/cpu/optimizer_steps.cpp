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

// The clip factor of an update (GlobalNormClipScale's output), 1 without clipping.
float clip_factor(const KernelCall& c, int clip_input) {
  const float* clip = optional_input(c, clip_input);
  return clip ? *clip : 1.0f;
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

Status run_sgd_update(const KernelCall& c, const params::SgdUpdateParams& h, const OptimizerLoops& loops) {
  const int64_t u = h.update_index(*c.in_data<int64_t>(2));
  if (u == 0) return Status::ok();
  SgdStep s;
  s.lr = static_cast<float>(h.schedule.at(u));
  s.weight_decay = static_cast<float>(h.weight_decay);
  s.momentum = static_cast<float>(h.momentum);
  s.nesterov = h.nesterov;
  s.grad_scale = h.gradient_scale(clip_factor(c, 4));
  s.zero_grad = h.zeroes_gradient();
  float* p = c.inout_data<float>(0);
  float* grad = c.inout_data<float>(1);
  float* buf = s.momentum != 0.0f && c.num_inputs() > 3 && c.has_input(3) ? c.inout_data<float>(3) : nullptr;
  for_chunks(c, numel(c.in(1)),
             [&](int64_t at, int64_t n) { loops.sgd(p + at, grad + at, buf ? buf + at : nullptr, n, s); });
  return Status::ok();
}

Status run_adam_update(const KernelCall& c, const params::AdamUpdateParams& h, const OptimizerLoops& loops) {
  const int64_t u = h.update_index(*c.in_data<int64_t>(2));
  if (u == 0) return Status::ok();
  const double lr = h.schedule.at(u);
  const double wd = h.weight_decay;
  const double b1 = h.beta1, b2 = h.beta2;
  const bool decoupled = h.decoupled;
  AdamStep s;
  s.beta1 = static_cast<float>(b1);
  s.beta2 = static_cast<float>(b2);
  s.eps = static_cast<float>(h.eps);
  s.grad_scale = h.gradient_scale(clip_factor(c, 5));
  s.coupled_weight_decay = decoupled ? 0.0f : static_cast<float>(wd);
  s.decay = decoupled ? static_cast<float>(1.0 - lr * wd) : 1.0f;
  s.step_size = static_cast<float>(lr / (1.0 - std::pow(b1, static_cast<double>(u))));
  s.inv_bias2_sqrt = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(b2, static_cast<double>(u))));
  s.zero_grad = h.zeroes_gradient();
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
Status run_global_norm_clip_scale(const KernelCall& c, const params::ClipScaleParams& h, const OptimizerLoops& loops) {
  const double grad_scale = h.grad_scale;
  double sum_sq = 0.0;
  for (int k = 0; k < c.num_inputs(); ++k) {
    const float* g = c.in_data<float>(k);
    const int64_t n = numel(c.in(k));
    for (int64_t i = 0; i < n; i += kPiece) sum_sq += loops.sum_squares(g + i, std::min(kPiece, n - i));
  }
  const double coef = h.max_norm / (std::sqrt(sum_sq) * std::fabs(grad_scale) + 1e-6);
  *c.out_data<float>(0) = static_cast<float>(std::fmin(coef, 1.0));
  return Status::ok();
}

}  // namespace pock::cpu
