// BatchNormTrainGrad and BatchNormParamGrad on the cpu backend: the per-channel steps of
// batch_norm_steps.hpp with the cpu loops.
#include "kernels/cpu/batch_norm_steps.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

Status train_grad(const KernelCall& c) { return run_batch_norm_train_grad(c, cpu_batch_norm_loops()); }
Status param_grad(const KernelCall& c) { return run_batch_norm_param_grad(c, cpu_batch_norm_loops()); }

}  // namespace

void register_batch_norm_grad(KernelTable& t) {
  t.add(f32_kernel("BatchNormTrainGrad", train_grad, batch_norm_train_grad_accepts));
  t.add(f32_kernel("BatchNormParamGrad", param_grad, batch_norm_param_grad_accepts));
}

}  // namespace pock::cpu
