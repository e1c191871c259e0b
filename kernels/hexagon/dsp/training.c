/* The training family on the DSP: SgdUpdate and AdamUpdate as kernels/ref/training.cpp defines
 * them (torch.optim's SGD, Adam, AdamW), with the learning-rate schedule of
 * kernels/params/training.hpp computed here from the step counter in the region, so a step needs
 * no host-side bookkeeping. A partial-channel gradient covers the parameter's leading rows: the
 * update touches the gradient's count of elements. */
#include "dsp_math.h"
#include "hx_dsp.h"

/* The step counter (i64) as a 32-bit count; 0 means "not an update step". */
static uint32_t update_index(const hx_op* op) {
  const uint32_t* step = (const uint32_t*)(hx_region + op->tensor[2]);
  const uint32_t s = step[0], acc = op->dim[1];
  const uint32_t q = hx_udiv(s, acc);
  return s > 0 && q * acc == s ? q : 0;
}

/* LrSchedule::at in float. */
static float learning_rate(const hx_op* op, uint32_t u) {
  const float lr = op->param[HX_P_LR];
  const uint32_t warmup = op->dim[2], total = op->dim[3];
  if (!(op->flags & (HX_FLAG_SCHEDULE_WARMUP | HX_FLAG_SCHEDULE_COSINE))) return lr;
  if (u <= warmup) return lr * (float)u / (float)warmup;
  if (op->flags & HX_FLAG_SCHEDULE_WARMUP) return lr;
  const float min_lr = op->param[HX_P_MIN_LR];
  const uint32_t span = total > warmup + 2 ? total - warmup - 1 : 1;
  float progress = (float)(u - warmup - 1) / (float)span;
  if (progress > 1.0f) progress = 1.0f;
  return min_lr + (lr - min_lr) * 0.5f * (1.0f + hx_cospif(progress));
}

/* The gradient scale: the clip factor (GlobalNormClipScale's output, 1 without clipping) over
 * the micro-batches summed into the gradient. */
static float gradient_scale(const hx_op* op, int clip_slot) {
  const float clip = hx_present(op, clip_slot) ? *hx_f32(op, clip_slot) : 1.0f;
  return clip / (float)op->dim[1];
}

static uint32_t check_update_common(const hx_op* op, uint32_t* slot, int clip_slot) {
  const uint64_t n = op->dim[0];
  if (op->dim[1] == 0) return HX_ERR_SHAPE;
  if (op->flags & HX_FLAG_SCHEDULE_WARMUP && op->dim[2] == 0) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, n, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, n, 4, slot));
  HX_CHECK(hx_check_tensor(op, 2, 1, 8, slot));
  HX_CHECK(hx_check_optional(op, clip_slot, 1, 4, slot));
  /* The counter is written by the host before the batch and read by no kernel that writes it. */
  const uint32_t* step = (const uint32_t*)(hx_region + op->tensor[2]);
  if (step[1] != 0 || step[0] > 0x7fffffffu) {
    *slot = 2;
    return HX_ERR_STEP;
  }
  return HX_OK;
}

static uint32_t check_sgd(const hx_op* op, uint32_t* slot) {
  HX_CHECK(check_update_common(op, slot, 4));
  return hx_check_optional(op, 3, op->dim[0], 4, slot);
}

/* g += wd p; buf = momentum buf + g; g = nesterov ? g + momentum buf : buf; p -= lr g. */
static void run_sgd(const hx_op* op) {
  const uint32_t u = update_index(op);
  if (u == 0) return;
  float* p = hx_f32(op, 0);
  float* grad = hx_f32(op, 1);
  float* buf = hx_present(op, 3) ? hx_f32(op, 3) : 0;
  const float lr = learning_rate(op, u);
  const float wd = op->param[HX_P_WEIGHT_DECAY], momentum = op->param[HX_P_MOMENTUM];
  const int nesterov = (op->flags & HX_FLAG_NESTEROV) != 0, zero = (op->flags & HX_FLAG_ZERO_GRAD) != 0;
  const float scale = gradient_scale(op, 4);
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) {
    float g = grad[i] * scale;
    if (wd != 0.0f) g += wd * p[i];
    if (momentum != 0.0f && buf) {
      buf[i] = momentum * buf[i] + g;
      g = nesterov ? g + momentum * buf[i] : buf[i];
    }
    p[i] -= lr * g;
    if (zero) grad[i] = 0.0f;
  }
}

static uint32_t check_adam(const hx_op* op, uint32_t* slot) {
  HX_CHECK(check_update_common(op, slot, 5));
  HX_CHECK(hx_check_tensor(op, 3, op->dim[0], 4, slot));
  return hx_check_tensor(op, 4, op->dim[0], 4, slot);
}

/* m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^u) m / (sqrt(v) / sqrt(1 - b2^u)
 * + eps). 1 - b^u is -expm1(u log b), from log b computed on the host in double: exact where
 * 1 - b^u is small (b2 = 0.999 at u = 1). */
static void run_adam(const hx_op* op) {
  const uint32_t u = update_index(op);
  if (u == 0) return;
  float* p = hx_f32(op, 0);
  float* grad = hx_f32(op, 1);
  float* m = hx_f32(op, 3);
  float* v = hx_f32(op, 4);
  const float lr = learning_rate(op, u);
  const float wd = op->param[HX_P_WEIGHT_DECAY], eps = op->param[HX_P_EPS];
  const float b1 = op->param[HX_P_BETA1], b2 = op->param[HX_P_BETA2];
  const float omb1 = op->param[HX_P_ONE_MINUS_BETA1], omb2 = op->param[HX_P_ONE_MINUS_BETA2];
  const float bias1 = -hx_expm1f((float)u * op->param[HX_P_LOG_BETA1]);
  const float bias2_sqrt = hx_sqrtf(-hx_expm1f((float)u * op->param[HX_P_LOG_BETA2]));
  const int decoupled = (op->flags & HX_FLAG_DECOUPLED) != 0, zero = (op->flags & HX_FLAG_ZERO_GRAD) != 0;
  const float scale = gradient_scale(op, 5);
  const float step_size = lr / bias1;
  const float inv_bias2_sqrt = 1.0f / bias2_sqrt;
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) {
    float g = grad[i] * scale;
    float w = p[i];
    if (wd != 0.0f) {
      if (decoupled) w *= 1.0f - lr * wd;
      else g += wd * w;
    }
    m[i] = fmaf(b1, m[i], omb1 * g);
    v[i] = fmaf(b2, v[i], omb2 * g * g);
    const float denom = hx_sqrtf(v[i]) * inv_bias2_sqrt + eps;
    p[i] = w - step_size * m[i] / denom;
    if (zero) grad[i] = 0.0f;
  }
}

const hx_kernel hx_training_kernels[] = {
    {HX_OP_SGD_UPDATE, check_sgd, run_sgd},
    {HX_OP_ADAM_UPDATE, check_adam, run_adam},
    {0, 0, 0},
};
