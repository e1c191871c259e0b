// The optimizer updates (SgdUpdate, AdamUpdate) and their helpers (AccumulateGrad,
// GlobalNormClipScale) as the cpu and neon backends share them: this file turns the step counter
// and the op's parameters (kernels/params/training.hpp, parsed once at prepare, with the one
// learning-rate schedule) into the per-step constants, following torch.optim as ref/training.cpp
// does, and splits the elements over the pool; the backend supplies the elementwise update loops
// (OptimizerLoops).
#pragma once
#include <cstdint>

#include "kernels/params/training.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

// torch.optim.SGD (dampening 0): g = grad * grad_scale + wd p; buf = momentum buf + g;
// g = nesterov ? g + momentum buf : buf; p -= lr g. With `zero_grad` the gradient is an
// accumulator over micro-batches and is cleared after use.
struct SgdStep {
  float lr = 0.0f, weight_decay = 0.0f, momentum = 0.0f, grad_scale = 1.0f;
  bool nesterov = false, zero_grad = false;
};

// torch.optim.Adam / AdamW: g = grad * grad_scale (+ wd p for Adam); p *= decay (AdamW);
// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= step_size m / (sqrt(v) inv_bias2_sqrt + eps).
struct AdamStep {
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, grad_scale = 1.0f;
  float coupled_weight_decay = 0.0f;  // Adam: added to the gradient
  float decay = 1.0f;                 // AdamW: 1 - lr wd, applied to the parameter first
  float step_size = 0.0f;             // lr / (1 - b1^t)
  float inv_bias2_sqrt = 1.0f;        // 1 / sqrt(1 - b2^t)
  bool zero_grad = false;
};

struct OptimizerLoops {
  void (*sgd)(float* p, float* grad, float* momentum_buffer, int64_t n, const SgdStep& s);  // buffer may be null
  void (*adam)(float* p, float* grad, float* m, float* v, int64_t n, const AdamStep& s);
  void (*accumulate)(float* acc, const float* grad, int64_t n);  // acc += grad
  float (*sum_squares)(const float* x, int64_t n);
};

// (param, grad, step, ...) with the state shaped like param, all f32 but the i64 step.
bool sgd_update_accepts(const pock_op_desc& op);
bool adam_update_accepts(const pock_op_desc& op);
bool accumulate_grad_accepts(const pock_op_desc& op);
bool global_norm_clip_scale_accepts(const pock_op_desc& op);

Status run_sgd_update(const KernelCall& c, const params::SgdUpdateParams& p, const OptimizerLoops& loops);
Status run_adam_update(const KernelCall& c, const params::AdamUpdateParams& p, const OptimizerLoops& loops);
Status run_accumulate_grad(const KernelCall& c, const OptimizerLoops& loops);
Status run_global_norm_clip_scale(const KernelCall& c, const params::ClipScaleParams& p, const OptimizerLoops& loops);

// A backend's kernel table entries for the four ops over its loops (`Loops` a constant of the
// backend), with the cpu's acceptance checks and the backend's score.
template <const OptimizerLoops& Loops>
struct OptimizerKernels {
  static Status sgd(const KernelCall& c, const params::SgdUpdateParams& p) { return run_sgd_update(c, p, Loops); }
  static Status adam(const KernelCall& c, const params::AdamUpdateParams& p) { return run_adam_update(c, p, Loops); }
  static Status accumulate(const KernelCall& c) { return run_accumulate_grad(c, Loops); }
  static Status clip(const KernelCall& c, const params::ClipScaleParams& p) { return run_global_norm_clip_scale(c, p, Loops); }
  static void register_all(KernelTable& t, int32_t score) {
    KernelDef d = typed_kernel<params::SgdUpdateParams, sgd>("SgdUpdate", DType::kF32, score);
    d.accepts = sgd_update_accepts;
    t.add(d);
    d = typed_kernel<params::AdamUpdateParams, adam>("AdamUpdate", DType::kF32, score);
    d.accepts = adam_update_accepts;
    t.add(d);
    d = typed_kernel<params::ClipScaleParams, clip>("GlobalNormClipScale", DType::kF32, score);
    d.accepts = global_norm_clip_scale_accepts;
    t.add(d);
    KernelDef acc{"AccumulateGrad", DType::kF32, accumulate, score};
    acc.accepts = accumulate_grad_accepts;
    t.add(acc);
  }
};

}  // namespace pock::cpu
