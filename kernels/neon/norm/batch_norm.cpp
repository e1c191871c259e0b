// BatchNormTrain with NEON: the per-channel steps of kernels/cpu/batch_norm_steps.hpp with the
// neon loops.
#include "kernels/neon/neon_batch_norm.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

Status train(const KernelCall& c, const params::BatchNormParams& p) {
  return cpu::run_batch_norm_train(c, p, neon_batch_norm_loops());
}

}  // namespace

void register_batch_norm(KernelTable& t) {
  t.add(typed_kernel<params::BatchNormParams, train>("BatchNormTrain", DType::kF32, kNeonScore,
                                                    cpu::batch_norm_train_accepts));
}

}  // namespace pock::neon
