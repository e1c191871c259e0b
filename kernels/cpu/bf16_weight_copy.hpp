// A weight's bf16 copy, shared through the KernelScope by the bf16 GEMMs that read the weight, so
// that a step converts each weight once instead of once per GEMM over it:
//   frozen   a constant weight (POCK_TENSOR_CONSTANT) is converted when the first op over it is
//            prepared, and never again (every function's ops over it share the copy).
//   keep     a trainable weight's forward Linear converts it each run into the copy...
//   kept     ...and the same step's LinearInputGrad reads that copy. The compiler pairs the two in
//            one function (attribute bf16_weight, kernels/params/linalg.hpp), so the forward runs
//            first, and the weight cannot change between them: its update follows every read of it.
//            Because each forward converts anew, a weight written from outside between steps
//            (set, checkpoint load, rollback) is never read through a stale copy.
// Only the oneDNN way (Bf16Isa::kAvx512Bf16) uses copies; the f32 fallback rounds per run.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/params/linalg.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cpu {

enum class Bf16WeightUse {
  kConvert,  // converted into the scratch region on every run (activations, unpaired weights)
  kFrozen,
  kKeep,
  kKept,
};

struct Bf16WeightCopy {
  std::vector<uint16_t> values;
  int keepers = 0;  // prepared kKeep ops over the weight on this backend instance
};

// How a GEMM uses its weight operand `w`, from the weight's constness and the op's bf16_weight.
Bf16WeightUse bf16_weight_use(const pock_tensor_desc& w, params::Bf16Weight attr);

// The copy of `w` that ops with `use` (not kConvert) share, made on first request (converted at
// once for kFrozen); a kKeep op is counted in its keepers.
Result<std::shared_ptr<Bf16WeightCopy>> shared_bf16_copy(KernelScope& scope, const pock_tensor_desc& w,
                                                         Bf16WeightUse use);

}  // namespace pock::cpu
