/* The layer_grad_conv family on the DSP: the gradients of a pointwise Conv2d (NCHW, P pixels per
 * plane) and the bias gradient of any Conv2d in NCHW. A partial-channel update asks for the
 * leading R output channels of the weight and bias gradients only. */
#include "dsp_math.h"
#include "hx_dsp.h"

static uint32_t check_input_grad(const hx_op* op, uint32_t* slot) {
  const uint64_t n = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3];
  HX_CHECK(hx_check_tensor(op, 0, n * o * p, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, o * c, 4, slot));
  return hx_check_tensor(op, 3, n * c * p, 4, slot);
}

/* dx[n, c, :] = sum_j w[j, c] dy[n, j, :]: planes of dy accumulate into a plane of dx. */
static void run_input_grad(const hx_op* op) {
  const uint32_t batch = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3];
  const float* dy = hx_f32(op, 0);
  const float* w = hx_f32(op, 1);
  float* dx = hx_f32(op, 3);
  for (uint32_t n = 0; n < batch; ++n) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      float* dxc = dx + (n * c + ch) * p;
      for (uint32_t i = 0; i < p; ++i) dxc[i] = 0.0f;
      for (uint32_t j = 0; j < o; ++j) {
        const float wv = w[j * c + ch];
        const float* dyj = dy + (n * o + j) * p;
        for (uint32_t i = 0; i < p; ++i) dxc[i] += wv * dyj[i];
      }
    }
  }
}

static uint32_t check_weight_grad(const hx_op* op, uint32_t* slot) {
  const uint64_t n = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3], rows = op->dim[4];
  if (rows > o) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, n * c * p, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, n * o * p, 4, slot));
  return hx_check_tensor(op, 3, rows * c, 4, slot);
}

/* dw[j, c] = sum_n dot(dy[n, j, :], x[n, c, :]): dot products of contiguous planes. */
static void run_weight_grad(const hx_op* op) {
  const uint32_t batch = op->dim[0], c = op->dim[1], o = op->dim[2], p = op->dim[3], rows = op->dim[4];
  const float* x = hx_f32(op, 0);
  const float* dy = hx_f32(op, 1);
  float* dw = hx_f32(op, 3);
  for (uint32_t j = 0; j < rows; ++j) {
    for (uint32_t ch = 0; ch < c; ++ch) {
      float acc = 0.0f;
      for (uint32_t n = 0; n < batch; ++n) {
        const float* dyj = dy + (n * o + j) * p;
        const float* xc = x + (n * c + ch) * p;
        for (uint32_t i = 0; i < p; ++i) acc += dyj[i] * xc[i];
      }
      dw[j * c + ch] = acc;
    }
  }
}

static uint32_t check_channel_sum(const hx_op* op, uint32_t* slot) {
  const uint64_t n = op->dim[0], o = op->dim[1], p = op->dim[2], rows = op->dim[3];
  if (rows > o) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, n * o * p, 4, slot));
  return hx_check_tensor(op, 3, rows, 4, slot);
}

/* db[j] = sum over n and the plane of dy[n, j, :]. */
static void run_channel_sum(const hx_op* op) {
  const uint32_t batch = op->dim[0], o = op->dim[1], p = op->dim[2], rows = op->dim[3];
  const float* dy = hx_f32(op, 0);
  float* db = hx_f32(op, 3);
  for (uint32_t j = 0; j < rows; ++j) {
    float acc = 0.0f;
    for (uint32_t n = 0; n < batch; ++n) {
      const float* dyj = dy + (n * o + j) * p;
      for (uint32_t i = 0; i < p; ++i) acc += dyj[i];
    }
    db[j] = acc;
  }
}

const hx_kernel hx_layer_grad_conv_kernels[] = {
    {HX_OP_POINTWISE_CONV_INPUT_GRAD, check_input_grad, run_input_grad},
    {HX_OP_POINTWISE_CONV_WEIGHT_GRAD, check_weight_grad, run_weight_grad},
    {HX_OP_CHANNEL_SUM, check_channel_sum, run_channel_sum},
    {0, 0, 0},
};
