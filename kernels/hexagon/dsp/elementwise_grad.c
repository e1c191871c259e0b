/* The elementwise_grad family on the DSP: the Linear gradients (input, weight), the bias
 * gradient (SumToShape of [rows, n] to [n]) and the activation gradients dx = dy f'(x), with
 * PyTorch's values at the kinks as kernels/ref has them. */
#include "../../int8_rows.h"
#include "dsp_math.h"
#include "hx_dsp.h"
#include "int8_dot.h"

/* ---- Linear ---------------------------------------------------------------------------------- */

static uint32_t check_linear_input_grad(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  HX_CHECK(hx_check_tensor(op, 0, rows * n, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, n * k, 4, slot));
  return hx_check_tensor(op, 3, rows * k, 4, slot);
}

/* dx[m, :] = sum_p dy[m, p] w[p, :]: rows of w accumulate into a row of dx. */
static void run_linear_input_grad(const hx_op* op) {
  const uint32_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  const float* dy = hx_f32(op, 0);
  const float* w = hx_f32(op, 1);
  float* dx = hx_f32(op, 3);
  for (uint32_t m = 0; m < rows; ++m) {
    float* dxm = dx + m * k;
    for (uint32_t j = 0; j < k; ++j) dxm[j] = 0.0f;
    for (uint32_t p = 0; p < n; ++p) {
      const float g = dy[m * n + p];
      const float* wp = w + p * k;
      for (uint32_t j = 0; j < k; ++j) dxm[j] += g * wp[j];
    }
  }
}

static uint32_t check_linear_weight_grad(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  HX_CHECK(hx_check_tensor(op, 0, rows * n, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, rows * k, 4, slot));
  return hx_check_tensor(op, 3, n * k, 4, slot);
}

/* dw[i, :] = sum_m dy[m, i] x[m, :]: rows of x accumulate into a row of dw. */
static void run_linear_weight_grad(const hx_op* op) {
  const uint32_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  const float* dy = hx_f32(op, 0);
  const float* x = hx_f32(op, 1);
  float* dw = hx_f32(op, 3);
  for (uint32_t i = 0; i < n; ++i) {
    float* dwi = dw + i * k;
    for (uint32_t j = 0; j < k; ++j) dwi[j] = 0.0f;
    for (uint32_t m = 0; m < rows; ++m) {
      const float g = dy[m * n + i];
      const float* xm = x + m * k;
      for (uint32_t j = 0; j < k; ++j) dwi[j] += g * xm[j];
    }
  }
}

static uint32_t check_linear_int8_input_grad(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  if (n > HX_MAX_INT8_ROW) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, rows * n, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, k * n, 1, slot));
  HX_CHECK(hx_check_tensor(op, 2, n, 4, slot));
  return hx_check_tensor(op, 3, rows * k, 4, slot);
}

/* dx[m, p] = dot(q_m, w_t[p]) * s_m, q_m and s_m quantizing the row dy[m, :] * scale. */
static void run_linear_int8_input_grad(const hx_op* op) {
  const uint32_t rows = op->dim[0], n = op->dim[1], k = op->dim[2];
  const float* dy = hx_f32(op, 0);
  const int8_t* wt = (const int8_t*)(hx_region + op->tensor[1]);
  const float* scale = hx_f32(op, 2);
  float* dx = hx_f32(op, 3);
  int8_t* q = hx_int8_row();
  float* g = hx_float_row();
  for (uint32_t m = 0; m < rows; ++m) {
    for (uint32_t j = 0; j < n; ++j) g[j] = dy[m * n + j] * scale[j];
    const float s = pock_quantize_row_i8(g, n, q);
    for (uint32_t p = 0; p < k; ++p) dx[m * k + p] = (float)hx_dot_i8(q, wt + p * n, n) * s;
  }
}

/* ---- SumToShape [rows, n] -> [n] --------------------------------------------------------------- */

static uint32_t check_sum_rows(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], n = op->dim[1];
  HX_CHECK(hx_check_tensor(op, 0, rows * n, 4, slot));
  return hx_check_tensor(op, 3, n, 4, slot);
}

static void run_sum_rows(const hx_op* op) {
  const uint32_t rows = op->dim[0], n = op->dim[1];
  const float* x = hx_f32(op, 0);
  float* y = hx_f32(op, 3);
  for (uint32_t j = 0; j < n; ++j) y[j] = 0.0f;
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t j = 0; j < n; ++j) y[j] += x[r * n + j];
  }
}

/* ---- activations: dx = dy * f'(x) -------------------------------------------------------------- */

static float relu_d(float x) { return x > 0.0f ? 1.0f : 0.0f; }
static float relu6_d(float x) { return x > 0.0f && x < 6.0f ? 1.0f : 0.0f; }
static float gelu_d(float x) {
  const float cdf = 0.5f * (1.0f + hx_erff(x * 0.707106781f));
  const float pdf = hx_expf(-0.5f * x * x) * 0.398942280f; /* 1 / sqrt(2 pi) */
  return fmaf(x, pdf, cdf);
}
static float gelu_tanh_d(float x) {
  const float k = 0.797884561f; /* sqrt(2 / pi) */
  const float t = hx_tanhf(k * fmaf(0.044715f * x, x * x, x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * fmaf(3.0f * 0.044715f * x, x, 1.0f);
}
static float silu_d(float x) {
  const float s = hx_sigmoidf(x);
  return s * fmaf(x, 1.0f - s, 1.0f);
}

typedef float (*derivative_fn)(float);

static derivative_fn derivative_of(uint32_t kind) {
  switch (kind) {
    case HX_UNARY_RELU: return relu_d;
    case HX_UNARY_RELU6: return relu6_d;
    case HX_UNARY_GELU: return gelu_d;
    case HX_UNARY_GELU_TANH: return gelu_tanh_d;
    case HX_UNARY_SILU: return silu_d;
    default: return 0;
  }
}

static uint32_t check_unary_grad(const hx_op* op, uint32_t* slot) {
  if (!derivative_of(op->dim[1])) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, op->dim[0], 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, op->dim[0], 4, slot));
  return hx_check_tensor(op, 3, op->dim[0], 4, slot);
}

/* A product, not a select: a NaN or infinite dy stays NaN where f' is 0, as in kernels/ref. */
static void run_unary_grad(const hx_op* op) {
  const derivative_fn d = derivative_of(op->dim[1]);
  const float* dy = hx_f32(op, 0);
  const float* x = hx_f32(op, 1);
  float* dx = hx_f32(op, 3);
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) dx[i] = dy[i] * d(x[i]);
}

const hx_kernel hx_elementwise_grad_kernels[] = {
    {HX_OP_LINEAR_INPUT_GRAD, check_linear_input_grad, run_linear_input_grad},
    {HX_OP_LINEAR_WEIGHT_GRAD, check_linear_weight_grad, run_linear_weight_grad},
    {HX_OP_SUM_ROWS, check_sum_rows, run_sum_rows},
    {HX_OP_LINEAR_INT8_INPUT_GRAD, check_linear_int8_input_grad, run_linear_int8_input_grad},
    {HX_OP_UNARY_GRAD, check_unary_grad, run_unary_grad},
    {0, 0, 0},
};
