// BatchNormTrainGrad and BatchNormParamGrad with NEON: the per-channel steps of
// kernels/cpu/batch_norm_steps.hpp with the neon loops.
#include "kernels/neon/neon_batch_norm.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

Status train_grad(const KernelCall& c) { return cpu::run_batch_norm_train_grad(c, neon_batch_norm_loops()); }
Status param_grad(const KernelCall& c) { return cpu::run_batch_norm_param_grad(c, neon_batch_norm_loops()); }

}  // namespace

void register_batch_norm_grad(KernelTable& t) {
  t.add(def("BatchNormTrainGrad", train_grad, cpu::batch_norm_train_grad_accepts));
  t.add(def("BatchNormParamGrad", param_grad, cpu::batch_norm_param_grad_accepts));
}

}  // namespace pock::neon
