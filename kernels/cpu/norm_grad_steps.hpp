// The row-wise backward ops of the norm family over x seen as [rows, features] (the normalized
// or softmax axes last, contiguous): LayerNormGrad, RMSNormGrad, SoftmaxGrad, LogSoftmaxGrad.
// The traversal is shared by the cpu and neon backends, which bring their loops (NormGradLoops):
//   dx:              one task per block of rows, each row two passes (sums, then dx)
//   dgamma, dbeta:   one task per block of features, accumulating every row into its block, so
//                    no two tasks write the same element and no scratch is needed
// With g = gamma (1 when absent), xhat = (x - mean) * invstd and r = invrms:
//   LayerNorm  dx = invstd (g dy - mean(g dy) - xhat mean(g dy xhat)), dgamma = sum dy xhat, dbeta = sum dy
//   RMSNorm    dx = r g dy - x r^3 mean(g dy x),                       dgamma = sum dy x r
//   Softmax    dx = y (dy - sum(dy y));  LogSoftmax  dx = dy - exp(y) sum(dy)
#pragma once
#include <cstdint>

#include "kernels/params/norm.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

struct NormGradLoops {
  void (*layer_norm_row)(const float* dy, const float* x, const float* gamma, float mean, float invstd, float* dx,
                         int64_t n);
  // dgamma[j] += dy[j] (x[j] - mean) invstd, dbeta[j] += dy[j]
  void (*layer_norm_params)(const float* dy, const float* x, float mean, float invstd, float* dgamma, float* dbeta,
                            int64_t n);
  void (*rms_norm_row)(const float* dy, const float* x, const float* gamma, float invrms, float* dx, int64_t n);
  // dgamma[j] += dy[j] x[j] invrms
  void (*rms_norm_gamma)(const float* dy, const float* x, float invrms, float* dgamma, int64_t n);
  void (*softmax_row)(const float* dy, const float* y, float* dx, int64_t n);
  void (*log_softmax_row)(const float* dy, const float* y, float* dx, int64_t n);
};

bool layer_norm_grad_accepts(const pock_op_desc& op);
bool rms_norm_grad_accepts(const pock_op_desc& op);
bool softmax_grad_accepts(const pock_op_desc& op);  // the last axis (or trailing 1s after it) only

Status run_layer_norm_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops);
Status run_rms_norm_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops);
Status run_softmax_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops);
Status run_log_softmax_grad(const KernelCall& c, const params::AxisNormParams& p, const NormGradLoops& loops);

// A backend's table entries for the four ops over its loops (`Loops` a constant of the backend).
template <const NormGradLoops& Loops>
struct NormGradKernels {
  using P = params::AxisNormParams;
  static Status layer_norm(const KernelCall& c, const P& p) { return run_layer_norm_grad(c, p, Loops); }
  static Status rms_norm(const KernelCall& c, const P& p) { return run_rms_norm_grad(c, p, Loops); }
  static Status softmax(const KernelCall& c, const P& p) { return run_softmax_grad(c, p, Loops); }
  static Status log_softmax(const KernelCall& c, const P& p) { return run_log_softmax_grad(c, p, Loops); }
  static void register_all(KernelTable& t, int32_t score) {
    t.add(typed_kernel<P, layer_norm>("LayerNormGrad", DType::kF32, score, layer_norm_grad_accepts));
    t.add(typed_kernel<P, rms_norm>("RMSNormGrad", DType::kF32, score, rms_norm_grad_accepts));
    t.add(typed_kernel<P, softmax>("SoftmaxGrad", DType::kF32, score, softmax_grad_accepts));
    t.add(typed_kernel<P, log_softmax>("LogSoftmaxGrad", DType::kF32, score, softmax_grad_accepts));
  }
};

}  // namespace pock::cpu
