// BatchNorm (inference form: frozen layers), BatchNormTrain, BatchNormTrainGrad and BatchNormParamGrad on the cpu backend: the per-channel
// steps of batch_norm_steps.hpp with vectorized loops.
#include "kernels/cpu/batch_norm_steps.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

POCK_SIMD_CLONES float sum(const float* x, int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

POCK_SIMD_CLONES float sum_squared_deviation(const float* x, float center, int64_t n) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += (x[i] - center) * (x[i] - center);
  return s;
}

POCK_SIMD_CLONES void normalize(const float* x, float center, float scale, float shift, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - center) * scale + shift;
}

POCK_SIMD_CLONES void grad_sums(const float* dy, const float* x, float center, int64_t n, float* sum_dy,
                                float* sum_dy_dev) {
  float s = 0.0f, sd = 0.0f;
#pragma omp simd reduction(+ : s, sd)
  for (int64_t i = 0; i < n; ++i) {
    s += dy[i];
    sd += dy[i] * (x[i] - center);
  }
  *sum_dy = s;
  *sum_dy_dev = sd;
}

POCK_SIMD_CLONES void combine(const float* dy, const float* x, float center, float a, float b, float c, float* dx,
                              int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = a * dy[i] + b * (x[i] - center) + c;
}

const BatchNormLoops kLoops{sum, sum_squared_deviation, normalize, grad_sums, combine};

Status infer(const KernelCall& c, const params::BatchNormParams& p) { return run_batch_norm(c, p, kLoops); }
Status train(const KernelCall& c, const params::BatchNormParams& p) { return run_batch_norm_train(c, p, kLoops); }
Status train_grad(const KernelCall& c) { return run_batch_norm_train_grad(c, kLoops); }
Status param_grad(const KernelCall& c) { return run_batch_norm_param_grad(c, kLoops); }

KernelDef def(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_batch_norm(KernelTable& t) {
  using P = params::BatchNormParams;
  t.add(typed_kernel<P, infer>("BatchNorm", DType::kF32, kCpuScore, batch_norm_accepts));
  t.add(typed_kernel<P, train>("BatchNormTrain", DType::kF32, kCpuScore, batch_norm_train_accepts));
  t.add(def("BatchNormTrainGrad", train_grad, batch_norm_train_grad_accepts));
  t.add(def("BatchNormParamGrad", param_grad, batch_norm_param_grad_accepts));
}

}  // namespace pock::cpu
