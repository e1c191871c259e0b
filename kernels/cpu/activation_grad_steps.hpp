// The activation gradients (dy, v) -> dx = dy * f'(v), where v is the forward input x (or the
// output y for SigmoidGrad and TanhGrad). What the op's attributes say is read once here; the
// elementwise loop comes from the backend (cpu or neon). Derivatives follow PyTorch at the kinks,
// as ref does: ReLU at 0 gives 0, clamp bounds are inclusive.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/params/elementwise.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

struct ActivationGradParams {
  float alpha = 0.01f;                  // LeakyReluGrad, EluGrad, SeluGrad, CeluGrad, ThresholdedReluGrad
  float gamma = 1.0f;                   // SeluGrad
  float lo = -INFINITY, hi = INFINITY;  // ClipGrad
};

using ActivationGradLoop = void (*)(const float* dy, const float* v, float* dx, int64_t n,
                                    const ActivationGradParams& params);

// (dy, v) -> dx, all f32 with one element count.
bool activation_grad_accepts(const pock_op_desc& op);
// Runs `loop` over the elements, split over the thread pool when there are enough of them.
Status run_activation_grad(const KernelCall& c, const params::ActivationParams& p, ActivationGradLoop loop);

}  // namespace pock::cpu
