// Typed parameters of the training family (losses, clipping, optimizer updates), parsed once at
// prepare by one parser per op that every backend shares — ref, cpu, neon and the device
// backends. Also the one learning-rate schedule: every backend's update reads it from here.
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// The recipe's "schedule", computed from the step counter on the device, so that a step needs no
// host-side bookkeeping. linear_warmup: lr * u / warmup for u <= warmup, then lr. cosine: the
// same warm-up, then lr at update warmup + 1 decaying to min_lr at update total_steps along half
// a cosine, and min_lr after (u is the 1-based update index).
struct LrSchedule {
  enum class Kind : uint8_t { kConstant, kLinearWarmup, kCosine };
  Kind kind = Kind::kConstant;
  double lr = 0.01;
  int64_t warmup_steps = 0, total_steps = 0;
  double min_lr = 0.0;
  double at(int64_t update) const;
};

// What every update shares: the schedule, weight decay and gradient accumulation.
struct UpdateParams {
  LrSchedule schedule;
  double weight_decay = 0.0;
  int64_t accumulation = 1;  // micro-batches per update
  // Which update a train step performs (`step` is 1-based: the runtime advances it before the
  // step); 0 on the micro-batches that only accumulate.
  int64_t update_index(int64_t step) const { return step > 0 && step % accumulation == 0 ? step / accumulation : 0; }
  // The gradient input is then an accumulator, cleared once applied.
  bool zeroes_gradient() const { return accumulation > 1; }
  // The gradient an update applies: the accumulator's mean over micro-batches, times the clip factor.
  float gradient_scale(float clip) const { return static_cast<float>(clip / static_cast<double>(accumulation)); }
};

// torch.optim.SGD (dampening 0).
struct SgdUpdateParams : UpdateParams {
  double momentum = 0.0;
  bool nesterov = false;
};

// torch.optim.Adam, or AdamW with `decoupled`.
struct AdamUpdateParams : UpdateParams {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool decoupled = false;
};

// SoftmaxCrossEntropy and its gradient (PyTorch's ignore_index and label_smoothing).
struct CrossEntropyParams {
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

// NllLoss and its gradient: ONNX's NegativeLogLikelihoodLoss (class axis 1, optional weights).
struct NllLossParams {
  enum class Reduction : uint8_t { kNone, kSum, kMean };
  Reduction reduction = Reduction::kMean;
  // No label is ignored when the attribute is absent: a label can never be this value, which lies
  // outside every class range.
  int64_t ignore_index = INT64_MIN;
};

// torch.nn.utils.clip_grad_norm_ over gradients scaled by grad_scale.
struct ClipScaleParams {
  double grad_scale = 1.0, max_norm = 1.0;
};

Status parse(const pock_op_desc& op, SgdUpdateParams* out);
Status parse(const pock_op_desc& op, AdamUpdateParams* out);
Status parse(const pock_op_desc& op, CrossEntropyParams* out);
// The labels of a cross-entropy op (SoftmaxCrossEntropy(Grad), LinearQCrossEntropy), checked the
// same way by every host backend before any output is written: each label not equal to `ignore`
// lies in [0, classes). `counted` gets how many rows are not ignored (the loss is their mean).
Status count_labels(const pock_op_desc& op, const int64_t* labels, int64_t rows, int64_t classes, int64_t ignore,
                    int64_t* counted);
Status parse(const pock_op_desc& op, ClipScaleParams* out);
Status parse(const pock_op_desc& op, NllLossParams* out);

}  // namespace pock::params
