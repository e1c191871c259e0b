// MatMul and Linear with compute "bf16" on the neon backend: BFMMLA where the CPU reports BF16
// (kernels/neon/bf16_gemm.hpp). f32 GEMMs, and bf16 ones on CPUs without BF16, go to the cpu
// backend (with OpenBLAS) or ref.
#include "kernels/neon/bf16_gemm.hpp"
#include "kernels/neon/neon_families.hpp"

namespace pock::neon {

void register_linalg(KernelTable& t) {
  for (DType first_operand : {DType::kF32, DType::kBF16}) {
    t.add(bf16_gemm_kernel("MatMul", first_operand));
    t.add(bf16_gemm_kernel("Linear", first_operand));
  }
}

}  // namespace pock::neon
