// BatchNorm (inference form: frozen layers) and BatchNormTrain on the cpu backend: the
// per-channel steps of batch_norm_steps.hpp with the cpu loops.
#include "kernels/cpu/batch_norm_steps.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

Status infer(const KernelCall& c, const params::BatchNormParams& p) {
  return run_batch_norm(c, p, cpu_batch_norm_loops());
}
Status train(const KernelCall& c, const params::BatchNormParams& p) {
  return run_batch_norm_train(c, p, cpu_batch_norm_loops());
}

}  // namespace

void register_batch_norm(KernelTable& t) {
  using P = params::BatchNormParams;
  t.add(typed_kernel<P, infer>("BatchNorm", DType::kF32, kCpuScore, batch_norm_accepts));
  t.add(typed_kernel<P, train>("BatchNormTrain", DType::kF32, kCpuScore, batch_norm_train_accepts));
}

}  // namespace pock::cpu
