#include "kernels/cpu/norm_grad_steps.hpp"

#include <algorithm>
#include <initializer_list>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 13;

using Rows = params::RowSplit;

// rows = prod(x.shape[:axis]), features = prod(x.shape[axis:]) by the op's shared parser; false
// when its attributes are invalid (prepare then reports why).
bool rows_at_axis(const pock_op_desc& op, const pock_tensor_desc& x, Rows* r) {
  params::AxisNormParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  *r = p.rows(x);
  return true;
}

bool all_f32(const pock_op_desc& op) {
  for (int i = 0; i < op.num_inputs; ++i) {
    if (is_present(op.inputs[i]) && !is_f32(op.inputs[i])) return false;
  }
  for (int i = 0; i < op.num_outputs; ++i) {
    if (!is_f32(op.outputs[i])) return false;
  }
  return true;
}

// dy (input 0) and x (input 1) alike; `stats` inputs one value per row; the optional gamma (at
// `gamma`) and the parameter outputs from 1 on one value per feature.
bool row_norm_fits(const pock_op_desc& op, std::initializer_list<int> stats, int gamma) {
  Rows r;
  if (!all_f32(op) || op.num_inputs < 2 || !rows_at_axis(op, op.inputs[1], &r)) return false;
  if (numel(op.inputs[0]) != numel(op.inputs[1]) || numel(op.outputs[0]) != numel(op.inputs[1])) return false;
  for (int i : stats) {
    if (i >= op.num_inputs || numel(op.inputs[i]) != r.rows) return false;
  }
  if (gamma < op.num_inputs && is_present(op.inputs[gamma]) && numel(op.inputs[gamma]) != r.features) return false;
  for (int i = 1; i < op.num_outputs; ++i) {
    if (numel(op.outputs[i]) != r.features) return false;
  }
  return true;
}

const float* optional_input(const KernelCall& c, int i) {
  return i < c.num_inputs() && c.has_input(i) ? c.in_data<float>(i) : nullptr;
}

template <typename RowFn>
void for_rows(const KernelCall& c, const Rows& r, const RowFn& fn) {
  const size_t rows = static_cast<size_t>(r.rows);
  const size_t per_task =
      std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, r.features)));
  pthreadpool_t pool = rows > per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, rows, balanced_tile(pool, rows, per_task), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) fn(static_cast<int64_t>(i));
  });
}

// fn(begin, end) over feature blocks; each block visits every row.
template <typename BlockFn>
void for_feature_blocks(const KernelCall& c, const Rows& r, const BlockFn& fn) {
  const size_t features = static_cast<size_t>(r.features);
  const size_t per_task = std::max<size_t>(64, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, r.rows)));
  pthreadpool_t pool = features > per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, features, balanced_tile(pool, features, per_task),
               [&](size_t begin, size_t end) { fn(static_cast<int64_t>(begin), static_cast<int64_t>(end)); });
}

}  // namespace

bool layer_norm_grad_accepts(const pock_op_desc& op) {
  return op.num_inputs >= 4 && op.num_outputs == 3 && row_norm_fits(op, {2, 3}, 4);
}

bool rms_norm_grad_accepts(const pock_op_desc& op) {
  return op.num_inputs >= 3 && op.num_outputs == 2 && row_norm_fits(op, {2}, 3);
}

bool softmax_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1 || !all_f32(op)) return false;
  const pock_tensor_desc& y = op.inputs[1];
  params::AxisNormParams p;
  // Trailing dims of size 1 after the axis leave it contiguous.
  return params::parse(op, &p).is_ok() && p.axis_is_last(y) && numel(op.inputs[0]) == numel(y) &&
         numel(op.outputs[0]) == numel(y);
}

Status run_layer_norm_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops) {
  const Rows r = p.rows(c.in(1));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* mean = c.in_data<float>(2);
  const float* invstd = c.in_data<float>(3);
  const float* gamma = optional_input(c, 4);
  float* dx = c.out_data<float>(0);
  float* dgamma = c.out_data<float>(1);
  float* dbeta = c.out_data<float>(2);
  const int64_t f = r.features;
  for_rows(c, r,
           [&](int64_t i) { loops.layer_norm_row(dy + i * f, x + i * f, gamma, mean[i], invstd[i], dx + i * f, f); });
  for_feature_blocks(c, r, [&](int64_t begin, int64_t end) {
    std::fill(dgamma + begin, dgamma + end, 0.0f);
    std::fill(dbeta + begin, dbeta + end, 0.0f);
    for (int64_t i = 0; i < r.rows; ++i) {
      loops.layer_norm_params(dy + i * f + begin, x + i * f + begin, mean[i], invstd[i], dgamma + begin, dbeta + begin,
                              end - begin);
    }
  });
  return Status::ok();
}

Status run_rms_norm_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops) {
  const Rows r = p.rows(c.in(1));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* invrms = c.in_data<float>(2);
  const float* gamma = optional_input(c, 3);
  float* dx = c.out_data<float>(0);
  float* dgamma = c.out_data<float>(1);
  const int64_t f = r.features;
  for_rows(c, r, [&](int64_t i) { loops.rms_norm_row(dy + i * f, x + i * f, gamma, invrms[i], dx + i * f, f); });
  for_feature_blocks(c, r, [&](int64_t begin, int64_t end) {
    std::fill(dgamma + begin, dgamma + end, 0.0f);
    for (int64_t i = 0; i < r.rows; ++i) {
      loops.rms_norm_gamma(dy + i * f + begin, x + i * f + begin, invrms[i], dgamma + begin, end - begin);
    }
  });
  return Status::ok();
}

namespace {

Status run_softmax_rows(const KernelCall& c, const params::AxisNormParams& p,
                        void (*row)(const float*, const float*, float*, int64_t)) {
  const pock_tensor_desc& y = c.in(1);
  Rows r;
  r.features = y.dims[p.axis];
  r.rows = r.features ? numel(y) / r.features : 0;
  const int64_t f = r.features;
  const float* dy = c.in_data<float>(0);
  const float* yv = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  for_rows(c, r, [&](int64_t i) { row(dy + i * f, yv + i * f, dx + i * f, f); });
  return Status::ok();
}

}  // namespace

Status run_softmax_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops) {
  return run_softmax_rows(c, p, loops.softmax_row);
}

Status run_log_softmax_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops) {
  return run_softmax_rows(c, p, loops.log_softmax_row);
}

}  // namespace pock::cpu
