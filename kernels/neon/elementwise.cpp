// Forward elementwise ops with NEON: Add/Sub/Mul/Div on the same-shape, scalar and row broadcasts
// (kernels/cpu/broadcast_pattern.hpp; other broadcasts go to another backend) and the
// activations of CNNs and transformers. Activation formulas match the cpu backend's
// (kernels/cpu/elementwise.cpp): NaN passes through, tanh-GELU goes through the sigmoid.
#include <arm_neon.h>

#include "kernels/cpu/broadcast_pattern.hpp"
#include "kernels/params/elementwise.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_math.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

using cpu::BroadcastPattern;

float32x4_t splat(float v) { return vdupq_n_f32(v); }

// ---- binary -----------------------------------------------------------------------------------

struct AddOp {
  float32x4_t operator()(float32x4_t a, float32x4_t b) const { return vaddq_f32(a, b); }
};
struct SubOp {
  float32x4_t operator()(float32x4_t a, float32x4_t b) const { return vsubq_f32(a, b); }
};
struct MulOp {
  float32x4_t operator()(float32x4_t a, float32x4_t b) const { return vmulq_f32(a, b); }
};
struct DivOp {
  float32x4_t operator()(float32x4_t a, float32x4_t b) const { return vdivq_f32(a, b); }
};

template <typename Op>
Status binary(const KernelCall& c) {
  const Op op;
  const float* a = c.in_data<float>(0);
  const float* b = c.in_data<float>(1);
  float* y = c.out_data<float>(0);
  const BroadcastPattern pa = cpu::broadcast_pattern(c.in(0), c.out(0)), pb = cpu::broadcast_pattern(c.in(1), c.out(0));
  const int64_t n = numel(c.out(0));
  if (pa == BroadcastPattern::kScalar && pb == BroadcastPattern::kFull) {
    const float32x4_t s = splat(a[0]);
    map(b, y, n, [&](float32x4_t v) { return op(s, v); });
  } else if (pb == BroadcastPattern::kScalar && pa == BroadcastPattern::kFull) {
    const float32x4_t s = splat(b[0]);
    map(a, y, n, [&](float32x4_t v) { return op(v, s); });
  } else if (pa == BroadcastPattern::kRow || pb == BroadcastPattern::kRow) {
    const bool row_is_b = pb == BroadcastPattern::kRow;
    const int64_t width = numel(row_is_b ? c.in(1) : c.in(0));
    for (int64_t r = 0; r < n / width; ++r) {
      if (row_is_b)
        map(a + r * width, b, y + r * width, width, op);
      else
        map(a, b + r * width, y + r * width, width, op);
    }
  } else {
    map(a, b, y, n, op);
  }
  return Status::ok();
}

// ---- unary ------------------------------------------------------------------------------------

bool unary_accepts(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && op.inputs[0].dtype == POCK_F32 &&
         op.outputs[0].dtype == POCK_F32 && numel(op.inputs[0]) == numel(op.outputs[0]);
}

template <typename F>
Status unary(const KernelCall& c, const F& f) {
  map(c.in_data<float>(0), c.out_data<float>(0), numel(c.out(0)), f);
  return Status::ok();
}

// max(v, 0) but NaN stays NaN (as PyTorch): vmaxq_f32 propagates NaN.
Status relu(const KernelCall& c) {
  return unary(c, [](float32x4_t v) { return vmaxq_f32(v, splat(0.0f)); });
}

Status relu6(const KernelCall& c) {
  return unary(c, [](float32x4_t v) { return vminq_f32(vmaxq_f32(v, splat(0.0f)), splat(6.0f)); });
}

Status hard_swish(const KernelCall& c) {
  return unary(c, [](float32x4_t v) {
    const float32x4_t gate =
        vminq_f32(vmaxq_f32(vfmaq_f32(splat(0.5f), v, splat(1.0f / 6.0f)), splat(0.0f)), splat(1.0f));
    return vmulq_f32(v, gate);
  });
}

Status sigmoid_kernel(const KernelCall& c) {
  return unary(c, [](float32x4_t v) { return sigmoid(v); });
}

Status silu(const KernelCall& c) {
  return unary(c, [](float32x4_t v) { return vmulq_f32(v, sigmoid(v)); });
}

// 0.5 v (1 + erf(v / sqrt 2)), or v sigmoid(2 sqrt(2/pi) (v + 0.044715 v^3)) for approximate=tanh.
Status gelu(const KernelCall& c, const params::ActivationParams& p) {
  if (p.tanh_gelu) {
    return unary(c, [](float32x4_t v) {
      const float32x4_t inner = vfmaq_f32(v, vmulq_n_f32(vmulq_f32(v, v), 0.044715f), v);
      return vmulq_f32(v, sigmoid(vmulq_n_f32(inner, 1.5957691216057308f)));
    });
  }
  return unary(c, [](float32x4_t v) {
    return vmulq_f32(vmulq_n_f32(v, 0.5f), vaddq_f32(splat(1.0f), erf(vmulq_n_f32(v, 0.70710678118654752f))));
  });
}


}  // namespace

void register_elementwise(KernelTable& t) {
  t.add(def("Add", binary<AddOp>, cpu::binary_pattern_accepts));
  t.add(def("Sub", binary<SubOp>, cpu::binary_pattern_accepts));
  t.add(def("Mul", binary<MulOp>, cpu::binary_pattern_accepts));
  t.add(def("Div", binary<DivOp>, cpu::binary_pattern_accepts));
  t.add(def("Relu", relu, unary_accepts));
  t.add(def("Relu6", relu6, unary_accepts));
  t.add(def("HardSwish", hard_swish, unary_accepts));
  t.add(def("Sigmoid", sigmoid_kernel, unary_accepts));
  t.add(def("Silu", silu, unary_accepts));
  t.add(typed_kernel<params::ActivationParams, gelu>("Gelu", DType::kF32, kNeonScore, unary_accepts));
}

}  // namespace pock::neon
