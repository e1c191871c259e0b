// The training family's parsed parameters (kernels/params/training.hpp) as the device logic
// takes them (training_logic.hpp). Host code: training.cu and tests/cuda_logic share it.
#pragma once
#include "kernels/cuda/training_logic.hpp"
#include "kernels/params/training.hpp"

namespace pock::cuda {

inline ScheduleLogic schedule_logic(const params::UpdateParams& p) {
  ScheduleLogic s;
  s.kind = static_cast<int32_t>(p.schedule.kind);
  s.lr = p.schedule.lr;
  s.min_lr = p.schedule.min_lr;
  s.warmup_steps = p.schedule.warmup_steps;
  s.total_steps = p.schedule.total_steps;
  s.accumulation = p.accumulation;
  return s;
}

// The update's fixed part; lr and scale come from the step (training.cu's kernels, the tests).
inline SgdElement sgd_element(const params::SgdUpdateParams& h) {
  SgdElement e;
  e.weight_decay = static_cast<float>(h.weight_decay);
  e.momentum = static_cast<float>(h.momentum);
  e.nesterov = h.nesterov;
  e.zero_gradient = h.zeroes_gradient();
  return e;
}

inline AdamElement adam_element(const params::AdamUpdateParams& h) {
  AdamElement e;
  e.weight_decay = h.weight_decay;
  e.beta1 = h.beta1;
  e.beta2 = h.beta2;
  e.eps = h.eps;
  e.decoupled = h.decoupled;
  e.zero_gradient = h.zeroes_gradient();
  return e;
}

}  // namespace pock::cuda
