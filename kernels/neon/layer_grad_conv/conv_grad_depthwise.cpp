// Depthwise Conv2dGradInput and Conv2dGradWeight with NEON: the row-at-a-time traversal of
// kernels/cpu/conv_grad_kernel.hpp (per tap and output row, clipped to the columns that read no
// padding) with four-lane inner loops. Stride 2 — MobileNet's downsampling layers — uses
// NEON's de-interleaving loads (vld2q) instead of a gather. Other shapes are left to the cpu
// backend (GEMM) or ref.
#include <arm_neon.h>

#include <new>
#include <string>

#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

// y[i * stride] += w * x[i] for i in [0, n).
void scatter_scaled(float w, const float* x, float* y, int64_t stride, int64_t n) {
  const float32x4_t vw = vdupq_n_f32(w);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), vld1q_f32(x + i), vw));
  } else if (stride == 2) {
    // vld2q/vst2q touch y[2i .. 2i + 7]; stopping while i + 5 <= n keeps 2i + 7 within the
    // n elements this call owns, so the odd lanes written back unchanged are never another
    // task's pixels.
    for (; i + 5 <= n; i += 4) {
      float32x4x2_t pair = vld2q_f32(y + 2 * i);
      pair.val[0] = vfmaq_f32(pair.val[0], vld1q_f32(x + i), vw);
      vst2q_f32(y + 2 * i, pair);
    }
  }
  for (; i < n; ++i) y[i * stride] += w * x[i];
}

// sum of x[i * stride] * y[i] for i in [0, n).
float strided_dot(const float* x, int64_t stride, const float* y, int64_t n) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(x + i), vld1q_f32(y + i));
  } else if (stride == 2) {
    for (; i + 5 <= n; i += 4) acc = vfmaq_f32(acc, vld2q_f32(x + 2 * i).val[0], vld1q_f32(y + i));  // see above
  }
  float sum = vaddvq_f32(acc);
  for (; i < n; ++i) sum += x[i * stride] * y[i];
  return sum;
}

void input_plane(const cpu::ConvGeometry& g, const float* dy, const float* w, float* dx) {
  cpu::depthwise_input_plane_by_rows(g, dy, w, dx, scatter_scaled);
}

void weight_plane(const cpu::ConvGeometry& g, const float* x, const float* dy, double* sums) {
  cpu::depthwise_weight_plane_by_rows(g, x, dy, sums, strided_dot);
}

const cpu::DepthwiseGradLoops kLoops{input_plane, weight_plane};

bool grad_input_accepts(const pock_op_desc& op) {
  cpu::ConvGeometry g;
  return cpu::conv_grad_input_geometry(op, &g) && g.is_depthwise() && !g.bf16;  // bf16: ref rounds
}

bool grad_weight_accepts(const pock_op_desc& op) {
  cpu::ConvGeometry g;
  int64_t channels = 0;
  return cpu::conv_grad_weight_geometry(op, &g, &channels) && g.is_depthwise() && !g.bf16;
}

Status adopt(const pock_op_desc& op, std::unique_ptr<cpu::ConvKernel> kernel, Status status, void** state) {
  POCK_RETURN_IF_ERROR(status);
  if (!kernel) return Status(Code::kMissingKernel, std::string(op.op) + " '" + op.name + "': not depthwise");
  *state = kernel.release();
  return Status::ok();
}

Status grad_input_prepare(const pock_op_desc& op, void** state) {
  cpu::ConvGeometry g;
  if (!cpu::conv_grad_input_geometry(op, &g))
    return Status(Code::kInvalidArgument, std::string(op.name) + ": bad shapes");
  Status status;
  auto kernel = cpu::make_depthwise_conv_grad_input(op, g, kLoops, &status);
  return adopt(op, std::move(kernel), status, state);
}

Status grad_weight_prepare(const pock_op_desc& op, void** state) {
  cpu::ConvGeometry g;
  int64_t channels = 0;
  if (!cpu::conv_grad_weight_geometry(op, &g, &channels)) {
    return Status(Code::kInvalidArgument, std::string(op.name) + ": bad shapes");
  }
  Status status;
  auto kernel = cpu::make_depthwise_conv_grad_weight(op, g, channels, kLoops, &status);
  return adopt(op, std::move(kernel), status, state);
}

Status run(const KernelCall& c) { return static_cast<cpu::ConvKernel*>(c.state)->run(c); }
void release(void* state) { delete static_cast<cpu::ConvKernel*>(state); }

KernelDef def_with_state(const char* op, KernelPrepareFn prepare, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kNeonScore, prepare, release};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_conv_grad_depthwise(KernelTable& t) {
  t.add(def_with_state("Conv2dGradInput", grad_input_prepare, grad_input_accepts));
  t.add(def_with_state("Conv2dGradWeight", grad_weight_prepare, grad_weight_accepts));
}

}  // namespace pock::neon
