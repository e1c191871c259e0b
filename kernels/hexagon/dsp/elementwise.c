/* The elementwise family on the DSP: the activations (Relu, Relu6, Gelu in both forms, Silu) and
 * Add/Mul with a second operand of the same shape or repeated along rows (a bias). Outputs may
 * share their input's buffer (the planner's in-place rule): each element is read before written. */
#include "dsp_math.h"
#include "hx_dsp.h"

static float relu(float x) { return x > 0.0f ? x : 0.0f; }
static float relu6(float x) { return x > 0.0f ? (x < 6.0f ? x : 6.0f) : 0.0f; }
/* 0.5 x (1 + erf(x / sqrt 2)) */
static float gelu(float x) { return 0.5f * x * (1.0f + hx_erff(x * 0.707106781f)); }
/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
static float gelu_tanh(float x) { return 0.5f * x * (1.0f + hx_tanhf(0.797884561f * fmaf(0.044715f * x, x * x, x))); }
static float silu(float x) { return x * hx_sigmoidf(x); }

typedef float (*unary_fn)(float);

static unary_fn unary_of(uint32_t kind) {
  switch (kind) {
    case HX_UNARY_RELU: return relu;
    case HX_UNARY_RELU6: return relu6;
    case HX_UNARY_GELU: return gelu;
    case HX_UNARY_GELU_TANH: return gelu_tanh;
    case HX_UNARY_SILU: return silu;
    default: return 0;
  }
}

static uint32_t check_unary(const hx_op* op, uint32_t* slot) {
  if (!unary_of(op->dim[1])) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, op->dim[0], 4, slot));
  return hx_check_tensor(op, 3, op->dim[0], 4, slot);
}

static void run_unary(const hx_op* op) {
  const unary_fn f = unary_of(op->dim[1]);
  const float* x = hx_f32(op, 0);
  float* y = hx_f32(op, 3);
  for (uint32_t i = 0, n = op->dim[0]; i < n; ++i) y[i] = f(x[i]);
}

static uint32_t check_binary(const hx_op* op, uint32_t* slot) {
  const uint64_t count = op->dim[0], nb = op->dim[2], rows = op->dim[3];
  if (op->dim[1] != HX_BINARY_ADD && op->dim[1] != HX_BINARY_MUL) return HX_ERR_SHAPE;
  if (rows * nb != count) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, count, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, nb, 4, slot));
  return hx_check_tensor(op, 3, count, 4, slot);
}

static void run_binary(const hx_op* op) {
  const uint32_t nb = op->dim[2], rows = op->dim[3];
  const int add = op->dim[1] == HX_BINARY_ADD;
  const float* a = hx_f32(op, 0);
  const float* b = hx_f32(op, 1);
  float* y = hx_f32(op, 3);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* ar = a + r * nb;
    float* yr = y + r * nb;
    if (add) {
      for (uint32_t j = 0; j < nb; ++j) yr[j] = ar[j] + b[j];
    } else {
      for (uint32_t j = 0; j < nb; ++j) yr[j] = ar[j] * b[j];
    }
  }
}

const hx_kernel hx_elementwise_kernels[] = {
    {HX_OP_UNARY, check_unary, run_unary},
    {HX_OP_BINARY, check_binary, run_binary},
    {0, 0, 0},
};
