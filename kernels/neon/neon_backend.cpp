// The neon backend (aarch64 builds only): NEON intrinsics for the loops that dominate a training
// step on an ARM device — elementwise ops and their gradients, gradient sums, norms and their
// gradients, optimizer updates, depthwise-conv gradients, int8 products over frozen
// block-quantized weights (LinearQ, its input gradient, the fused LM head), and the GEMMs with
// compute "bf16" on CPUs with BF16 (BFMMLA: MatMul, Linear and Linear's gradients). Its kernels score
// above the cpu backend's portable loops, which in turn take what neon lacks (GEMM-based ops,
// pools, losses); ref is the fallback. Shape handling is shared with kernels/cpu (the *_steps.hpp traversals),
// so a neon kernel differs from its cpu twin only in its innermost loops.
#include "kernels/neon/neon_families.hpp"
#include "runtime/table_backend.hpp"

namespace pock {

const KernelTable& neon_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
#define POCK_NEON_FAMILY(family) neon::register_##family(t);
#include "kernels/neon/neon_families.def"
#undef POCK_NEON_FAMILY
    return t;
  }();
  return table;
}

pock_status builtin_backend_init_neon(pock_backend_v1* out) { return fill_table_backend(out, "neon", &neon_kernels()); }

}  // namespace pock
