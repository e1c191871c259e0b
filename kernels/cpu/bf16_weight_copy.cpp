#include "kernels/cpu/bf16_weight_copy.hpp"

#include <new>
#include <string>

#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {

Bf16WeightUse bf16_weight_use(const pock_tensor_desc& w, params::Bf16Weight attr) {
  if (is_constant(w) && w.data) return Bf16WeightUse::kFrozen;
  if (attr == params::Bf16Weight::kKeep) return Bf16WeightUse::kKeep;
  if (attr == params::Bf16Weight::kKept) return Bf16WeightUse::kKept;
  return Bf16WeightUse::kConvert;
}

Result<std::shared_ptr<Bf16WeightCopy>> shared_bf16_copy(KernelScope& scope, const pock_tensor_desc& w,
                                                         Bf16WeightUse use) {
  const int64_t n = numel(w);
  // Frozen and trainable copies under different keys: a frozen one is filled once, here.
  const std::string key = std::string(use == Bf16WeightUse::kFrozen ? "bf16 frozen " : "bf16 kept ") +
                          std::to_string(reinterpret_cast<uintptr_t>(w.data)) + " " + std::to_string(n);
  auto copy = std::static_pointer_cast<Bf16WeightCopy>(scope.find_shared(key));
  if (!copy) {
    try {
      copy = std::make_shared<Bf16WeightCopy>();
      copy->values.resize(static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      return Status(Code::kOutOfMemory, "bf16 GEMM: the weight's bf16 copy");
    }
    if (use == Bf16WeightUse::kFrozen) convert_to_bf16(static_cast<const float*>(w.data), n, copy->values.data());
    if (!scope.put_shared(key, copy, static_cast<size_t>(n) * sizeof(uint16_t))) {
      return Status(Code::kOutOfMemory, "bf16 GEMM: the weight's bf16 copy");
    }
  }
  if (use == Bf16WeightUse::kKeep) ++copy->keepers;
  return copy;
}

}  // namespace pock::cpu
