/* The conv family on the DSP: pointwise Conv2d (1x1, stride 1, unpadded, one group, NCHW), the
 * convolution of the expand/project layers of MobileNet-style blocks. Per batch entry it is
 * y[n] = w x[n] over planes of P pixels: each output plane accumulates whole input planes, so the
 * inner loop runs along contiguous pixels (and contracts into fused multiply-adds, as linalg.c). */
#include "dsp_math.h"
#include "hx_dsp.h"

static uint32_t check_pointwise_conv(const hx_op* op, uint32_t* slot) {
  const uint64_t n = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3];
  if ((op->flags & HX_FLAG_ACT_RELU) && (op->flags & HX_FLAG_ACT_RELU6)) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, n * c * p, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, o * c, 4, slot));
  HX_CHECK(hx_check_optional(op, 2, o, 4, slot));
  return hx_check_tensor(op, 3, n * o * p, 4, slot);
}

/* y[n, j, :] = act(b[j] + sum_c w[j, c] x[n, c, :]). */
static void run_pointwise_conv(const hx_op* op) {
  const uint32_t batch = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3];
  const float* x = hx_f32(op, 0);
  const float* w = hx_f32(op, 1);
  const float* b = hx_present(op, 2) ? hx_f32(op, 2) : 0;
  float* y = hx_f32(op, 3);
  const int relu = (op->flags & HX_FLAG_ACT_RELU) != 0, relu6 = (op->flags & HX_FLAG_ACT_RELU6) != 0;
  for (uint32_t n = 0; n < batch; ++n) {
    const float* xn = x + n * c * p;
    for (uint32_t j = 0; j < o; ++j) {
      float* yj = y + (n * o + j) * p;
      const float bias = b ? b[j] : 0.0f;
      for (uint32_t i = 0; i < p; ++i) yj[i] = bias;
      for (uint32_t ch = 0; ch < c; ++ch) {
        const float wv = w[j * c + ch];
        const float* xc = xn + ch * p;
        for (uint32_t i = 0; i < p; ++i) yj[i] += wv * xc[i];
      }
      if (relu || relu6) {
        for (uint32_t i = 0; i < p; ++i) {
          const float v = yj[i] > 0.0f ? yj[i] : 0.0f;
          yj[i] = relu6 && v > 6.0f ? 6.0f : v;
        }
      }
    }
  }
}

const hx_kernel hx_conv_kernels[] = {
    {HX_OP_POINTWISE_CONV, check_pointwise_conv, run_pointwise_conv},
    {0, 0, 0},
};
