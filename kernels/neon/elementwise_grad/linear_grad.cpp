// LinearInputGrad and LinearWeightGrad with compute "bf16" on the neon backend: BFMMLA where the
// CPU reports BF16 (kernels/neon/bf16_gemm.hpp). f32 ones, and bf16 ones on CPUs without BF16, go
// to the cpu backend (with OpenBLAS) or ref.
#include "kernels/neon/bf16_gemm.hpp"
#include "kernels/neon/neon_families.hpp"

namespace pock::neon {

void register_linear_grad(KernelTable& t) {
  for (DType dy : {DType::kF32, DType::kBF16}) {  // dy is bf16 when it is the compiler's bf16 copy
    t.add(bf16_gemm_kernel("LinearInputGrad", dy));
    t.add(bf16_gemm_kernel("LinearWeightGrad", dy));
  }
}

}  // namespace pock::neon
