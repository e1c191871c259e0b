// ClipMask and MaskGrad (docs/ops.md, activation_mask): what the op's attributes say, read once
// here, and the split over the thread pool; the elementwise loops come from the backend (the cpu
// backend's portable vector loops in kernels/cpu/activation_mask.cpp).
#pragma once
#include <cstdint>

#include "kernels/params/elementwise.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

// ClipMask's bounds as f32 values that f32 comparisons can use exactly: ref compares the f32
// input against the double attribute, and a bound such as 0.1 lies between two floats, so
// `v > lo` must use the largest float <= lo and `v >= lo` the smallest float >= lo (likewise hi).
// An absent bound is an inclusive infinite one (only NaN fails it).
struct MaskBounds {
  float lo, hi;
  bool lo_strict, hi_strict;  // v > lo rather than v >= lo; v < hi rather than v <= hi
};
MaskBounds clip_mask_bounds(const params::ActivationParams& p);

using ClipMaskLoop = void (*)(const float* v, uint8_t* mask, int64_t n, const MaskBounds& bounds);
using MaskGradLoop = void (*)(const float* dy, const uint8_t* mask, float* dx, int64_t n);

// ClipMask: f32 in, u8 or bool out, one element count. MaskGrad: (f32 dy, u8/bool mask) -> f32.
bool clip_mask_accepts(const pock_op_desc& op);
bool mask_grad_accepts(const pock_op_desc& op);

// Run `loop` over the elements, split over the thread pool when there are enough of them.
Status run_clip_mask(const KernelCall& c, const params::ActivationParams& p, ClipMaskLoop loop);
Status run_mask_grad(const KernelCall& c, MaskGradLoop loop);

}  // namespace pock::cpu
