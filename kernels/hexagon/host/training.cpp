// The training family on the DSP: SgdUpdate and AdamUpdate, with their learning-rate schedule,
// weight decay, gradient accumulation and clip factor (kernels/params/training.hpp). The losses
// stay on the host: their output is the step's loss, which the caller reads there anyway.
#include <cmath>

#include "encoding.hpp"
#include "kernels/params/training.hpp"

namespace pock::hexagon {
namespace {

// param, grad (its leading rows under a partial-channel update), the i64 step scalar, state
// inputs of the gradient's size, and an optional f32 scalar clip factor at `clip`.
bool update_tensors(const pock_op_desc& op, int min_in, int clip) {
  if (op.num_inputs < min_in || op.num_inputs > clip + 1 || op.num_outputs != 0) return false;
  for (int i = 0; i < min_in; ++i) {
    if (!has_input(op, i)) return false;
  }
  const int64_t n = numel(op.inputs[1]);
  if (!is_f32(op.inputs[0]) || !is_f32(op.inputs[1]) || n > numel(op.inputs[0]) || !fits_u32(n)) return false;
  if (op.inputs[2].dtype != POCK_I64 || numel(op.inputs[2]) != 1) return false;
  for (int i = 3; i < op.num_inputs; ++i) {
    if (!has_input(op, i)) continue;
    if (!is_f32(op.inputs[i]) || numel(op.inputs[i]) != (i == clip ? 1 : n)) return false;
  }
  return true;
}

bool encode_update(const params::UpdateParams& p, Encoding* e) {
  const params::LrSchedule& s = p.schedule;
  if (!fits_u32(p.accumulation) || !fits_u32(s.warmup_steps) || !fits_u32(s.total_steps)) return false;
  hx_op& r = e->record;
  if (s.kind == params::LrSchedule::Kind::kLinearWarmup) r.flags |= HX_FLAG_SCHEDULE_WARMUP;
  if (s.kind == params::LrSchedule::Kind::kCosine) r.flags |= HX_FLAG_SCHEDULE_COSINE;
  if (p.zeroes_gradient()) r.flags |= HX_FLAG_ZERO_GRAD;
  r.dim[1] = static_cast<uint32_t>(p.accumulation);
  r.dim[2] = static_cast<uint32_t>(s.warmup_steps);
  r.dim[3] = static_cast<uint32_t>(s.total_steps);
  r.param[HX_P_LR] = static_cast<float>(s.lr);
  r.param[HX_P_MIN_LR] = static_cast<float>(s.min_lr);
  r.param[HX_P_WEIGHT_DECAY] = static_cast<float>(p.weight_decay);
  return true;
}

void update_slots(const pock_op_desc& op, Encoding* e) {
  e->record.dim[0] = static_cast<uint32_t>(numel(op.inputs[1]));
  for (int i = 0; i < op.num_inputs; ++i) {
    if (has_input(op, i)) from_input(e, i, i);
  }
}

// SgdUpdate(param, grad, step, momentum_buffer?, clip_scale?)
bool encode_sgd(const pock_op_desc& op, Encoding* e) {
  if (!update_tensors(op, 3, 4)) return false;
  params::SgdUpdateParams p;
  if (!params::parse(op, &p).is_ok() || !encode_update(p, e)) return false;
  if (p.momentum != 0.0 && !has_input(op, 3)) return false;
  e->record.opcode = HX_OP_SGD_UPDATE;
  if (p.nesterov) e->record.flags |= HX_FLAG_NESTEROV;
  e->record.param[HX_P_MOMENTUM] = static_cast<float>(p.momentum);
  update_slots(op, e);
  return true;
}

// AdamUpdate(param, grad, step, exp_avg, exp_avg_sq, clip_scale?)
bool encode_adam(const pock_op_desc& op, Encoding* e) {
  if (!update_tensors(op, 5, 5)) return false;
  params::AdamUpdateParams p;
  if (!params::parse(op, &p).is_ok() || !encode_update(p, e)) return false;
  hx_op& r = e->record;
  r.opcode = HX_OP_ADAM_UPDATE;
  if (p.decoupled) r.flags |= HX_FLAG_DECOUPLED;
  r.param[HX_P_BETA1] = static_cast<float>(p.beta1);
  r.param[HX_P_BETA2] = static_cast<float>(p.beta2);
  // In double here: the DSP has float only, and 1 - beta2^t needs these exact (hx_wire.h).
  r.param[HX_P_ONE_MINUS_BETA1] = static_cast<float>(1.0 - p.beta1);
  r.param[HX_P_ONE_MINUS_BETA2] = static_cast<float>(1.0 - p.beta2);
  r.param[HX_P_LOG_BETA1] = static_cast<float>(std::log(p.beta1));
  r.param[HX_P_LOG_BETA2] = static_cast<float>(std::log(p.beta2));
  r.param[HX_P_EPS] = static_cast<float>(p.eps);
  update_slots(op, e);
  return true;
}

}  // namespace

const OpEncoder kTrainingEncoders[] = {
    {"SgdUpdate", encode_sgd},
    {"AdamUpdate", encode_adam},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
