// BatchNorm's training ops, per channel over x [N, C, inner]: BatchNormTrain (batch statistics,
// normalize and the fused activation, update running statistics), BatchNormTrainGrad and
// BatchNormParamGrad. The traversal
// — channels split over the pool, each channel's rows summed in f32 lanes and the rows added in
// double — is shared by the cpu and neon backends; each brings its vector loops (BatchNormLoops).
//
// With xhat = (x - mean) * invstd, k = gamma * invstd and M = N * inner values per channel:
//   dgamma = sum(dy * xhat), dbeta = sum(dy)
//   dx = k dy - k mean(dy) - (x - mean) * k invstd^2 mean(dy * (x - mean))
// so dx is one fused pass, a dy + b (x - mean) + c, after one pass of sums.
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/params/norm.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

// Each loop runs over `rows` rows of n values, `stride` floats apart (one channel's rows of
// consecutive images): a channel of a small plane (MobileNetV2's 4x4 layers: 8 rows of 16) is one
// call, not one per row — calls per row of 16 values cost more than their arithmetic.
struct BatchNormLoops {
  float (*sum)(const float* x, int64_t rows, int64_t stride, int64_t n);
  // sum of (x - center)^2
  float (*sum_squared_deviation)(const float* x, float center, int64_t rows, int64_t stride, int64_t n);
  // y = clamp((x - center) * scale + shift) (y at the same offsets as x): the fused activation as a
  // clamp [lo, hi] (activation_epilogue.hpp), two selects that let NaN through as Relu6 does
  void (*normalize)(const float* x, float center, float scale, float shift, Clamp clamp, float* y, int64_t rows,
                    int64_t stride, int64_t n);
  // *sum_dy = sum of dy, *sum_dy_dev = sum of dy * (x - center)
  void (*grad_sums)(const float* dy, const float* x, float center, int64_t rows, int64_t stride, int64_t n,
                    float* sum_dy, float* sum_dy_dev);
  // dx = a dy + b (x - center) + c
  void (*combine)(const float* dy, const float* x, float center, float a, float b, float c, float* dx, int64_t rows,
                  int64_t stride, int64_t n);
};

bool batch_norm_accepts(const pock_op_desc& op);
bool batch_norm_train_accepts(const pock_op_desc& op);
bool batch_norm_train_grad_accepts(const pock_op_desc& op);
bool batch_norm_param_grad_accepts(const pock_op_desc& op);

// Inference form: y = (x - running_mean) * gamma / sqrt(running_var + eps) + beta, per channel.
// The cpu backend's loops (batch_norm_loops.cpp).
const BatchNormLoops& cpu_batch_norm_loops();

Status run_batch_norm(const KernelCall& c, const params::BatchNormParams& p, const BatchNormLoops& loops);
Status run_batch_norm_train(const KernelCall& c, const params::BatchNormParams& p, const BatchNormLoops& loops);
Status run_batch_norm_train_grad(const KernelCall& c, const BatchNormLoops& loops);
Status run_batch_norm_param_grad(const KernelCall& c, const BatchNormLoops& loops);

}  // namespace pock::cpu
