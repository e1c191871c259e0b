/* The activation_mask family on the DSP: ClipMask records f'(v) != 0 as one byte in the forward
 * pass, MaskGrad multiplies dy by it in the backward — bit for bit what kernels/ref computes
 * (a NaN v is outside every range; dy * 0 keeps a NaN dy NaN). */
#include "hx_dsp.h"

static uint32_t check_clip_mask(const hx_op* op, uint32_t* slot) {
  HX_CHECK(hx_check_tensor(op, 0, op->dim[0], 4, slot));
  return hx_check_tensor(op, 3, op->dim[0], 1, slot);
}

static void run_clip_mask(const hx_op* op) {
  const uint32_t f = op->flags;
  const int lo_strict = !(f & HX_FLAG_INCLUSIVE) && (f & HX_FLAG_HAS_LO);
  const int hi_strict = !(f & HX_FLAG_INCLUSIVE) && (f & HX_FLAG_HAS_HI);
  const float lo = op->param[0], hi = op->param[1];
  const float* v = hx_f32(op, 0);
  uint8_t* mask = hx_u8(op, 3);
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) {
    const float x = v[i];
    const int above = lo_strict ? x > lo : x >= lo;
    const int below = hi_strict ? x < hi : x <= hi;
    mask[i] = above && below ? 1 : 0;
  }
}

static uint32_t check_mask_grad(const hx_op* op, uint32_t* slot) {
  HX_CHECK(hx_check_tensor(op, 0, op->dim[0], 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, op->dim[0], 1, slot));
  return hx_check_tensor(op, 3, op->dim[0], 4, slot);
}

static void run_mask_grad(const hx_op* op) {
  const float* dy = hx_f32(op, 0);
  const uint8_t* mask = hx_u8(op, 1);
  float* dx = hx_f32(op, 3);
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) dx[i] = dy[i] * (mask[i] ? 1.0f : 0.0f);
}

const hx_kernel hx_activation_mask_kernels[] = {
    {HX_OP_CLIP_MASK, check_clip_mask, run_clip_mask},
    {HX_OP_MASK_GRAD, check_mask_grad, run_mask_grad},
    {0, 0, 0},
};
