/* The linalg family on the DSP: Linear (with its fused Relu/Relu6 epilogue) and MatMul. Scalar
 * float: v66/v67 HVX has no float arithmetic (HEXAGON.md). Loops run along rows of both operands,
 * so every inner loop reads memory in order. Inner loops are written `acc += a * b`, which clang
 * contracts into Hexagon's fused multiply-add (-ffp-contract=on) and unrolls with hardware loops;
 * the asm fmaf() would fuse as well but blocks both (10 vs 16 MFLOP/s under qemu). */
#include "../../int8_rows.h"
#include "dsp_math.h"
#include "hx_dsp.h"
#include "int8_dot.h"

static float epilogue(float v, uint32_t flags) {
  if (flags & HX_FLAG_ACT_RELU) return v > 0.0f ? v : 0.0f;
  if (flags & HX_FLAG_ACT_RELU6) return v > 0.0f ? (v < 6.0f ? v : 6.0f) : 0.0f;
  return v;
}

static uint32_t check_linear(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], k = op->dim[1], n = op->dim[2];
  if ((op->flags & HX_FLAG_ACT_RELU) && (op->flags & HX_FLAG_ACT_RELU6)) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, rows * k, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, n * k, 4, slot));
  HX_CHECK(hx_check_optional(op, 2, n, 4, slot));
  return hx_check_tensor(op, 3, rows * n, 4, slot);
}

/* y[r, j] = act(b[j] + sum_p x[r, p] w[j, p]): two dot products of contiguous rows. */
static void run_linear(const hx_op* op) {
  const uint32_t rows = op->dim[0], k = op->dim[1], n = op->dim[2];
  const float* x = hx_f32(op, 0);
  const float* w = hx_f32(op, 1);
  const float* b = hx_present(op, 2) ? hx_f32(op, 2) : 0;
  float* y = hx_f32(op, 3);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = x + r * k;
    for (uint32_t j = 0; j < n; ++j) {
      const float* wj = w + j * k;
      float acc = 0.0f;
      for (uint32_t p = 0; p < k; ++p) acc += xr[p] * wj[p];
      y[r * n + j] = epilogue(b ? acc + b[j] : acc, op->flags);
    }
  }
}

static uint32_t check_matmul(const hx_op* op, uint32_t* slot) {
  const uint64_t batch = op->dim[0], m = op->dim[1], n = op->dim[2], k = op->dim[3];
  if (op->dim[4] > 1 || op->dim[5] > 1) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, (op->dim[4] ? batch : 1) * m * k, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, (op->dim[5] ? batch : 1) * k * n, 4, slot));
  return hx_check_tensor(op, 3, batch * m * n, 4, slot);
}

/* c = op(a) op(b) per batch entry; element (i, p) of op(a) is a[i * sa_row + p * sa_col]. The
 * untransposed case accumulates rows of b into a row of c (contiguous); the others gather. */
static void run_matmul(const hx_op* op) {
  const uint32_t batch = op->dim[0], m = op->dim[1], n = op->dim[2], k = op->dim[3];
  const int ta = (op->flags & HX_FLAG_TRANSPOSE_A) != 0, tb = (op->flags & HX_FLAG_TRANSPOSE_B) != 0;
  const uint32_t sa_row = ta ? 1 : k, sa_col = ta ? m : 1;
  const uint32_t sb_row = tb ? 1 : n, sb_col = tb ? k : 1;
  for (uint32_t e = 0; e < batch; ++e) {
    const float* a = hx_f32(op, 0) + (op->dim[4] ? e * m * k : 0);
    const float* b = hx_f32(op, 1) + (op->dim[5] ? e * k * n : 0);
    float* c = hx_f32(op, 3) + e * m * n;
    for (uint32_t i = 0; i < m; ++i) {
      float* ci = c + i * n;
      for (uint32_t j = 0; j < n; ++j) ci[j] = 0.0f;
      for (uint32_t p = 0; p < k; ++p) {
        const float av = a[i * sa_row + p * sa_col];
        const float* bp = b + p * sb_row;
        for (uint32_t j = 0; j < n; ++j) ci[j] += av * bp[j * sb_col];
      }
    }
  }
}

static uint32_t check_linear_int8(const hx_op* op, uint32_t* slot) {
  const uint64_t rows = op->dim[0], k = op->dim[1], n = op->dim[2];
  if (k > HX_MAX_INT8_ROW) return HX_ERR_SHAPE;
  HX_CHECK(hx_check_tensor(op, 0, rows * k, 4, slot));
  HX_CHECK(hx_check_tensor(op, 1, n * k, 1, slot));
  HX_CHECK(hx_check_tensor(op, 2, n, 4, slot));
  HX_CHECK(hx_check_optional(op, 4, n, 4, slot));
  return hx_check_tensor(op, 3, rows * n, 4, slot);
}

/* y[r, j] = dot(q_r, w_j) * s_r * scale[j] (+ bias[j]): each row of x quantized once, then one
 * HVX dot product per output over contiguous int8 rows. */
static void run_linear_int8(const hx_op* op) {
  const uint32_t rows = op->dim[0], k = op->dim[1], n = op->dim[2];
  const float* x = hx_f32(op, 0);
  const int8_t* w = (const int8_t*)(hx_region + op->tensor[1]);
  const float* scale = hx_f32(op, 2);
  const float* b = hx_present(op, 4) ? hx_f32(op, 4) : 0;
  float* y = hx_f32(op, 3);
  int8_t* q = hx_int8_row();
  for (uint32_t r = 0; r < rows; ++r) {
    const float s = pock_quantize_row_i8(x + r * k, k, q);
    for (uint32_t j = 0; j < n; ++j) {
      const float v = (float)hx_dot_i8(q, w + j * k, k) * s * scale[j];
      y[r * n + j] = b ? v + b[j] : v;
    }
  }
}

const hx_kernel hx_linalg_kernels[] = {
    {HX_OP_LINEAR, check_linear, run_linear},
    {HX_OP_MATMUL, check_matmul, run_matmul},
    {HX_OP_LINEAR_INT8, check_linear_int8, run_linear_int8},
    {0, 0, 0},
};
