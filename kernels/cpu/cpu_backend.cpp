// The fast CPU backend: XNNPACK convolutions, OpenBLAS GEMM and vectorized loops. It holds only
// the kernels it runs faster than ref; every other op (and every shape a kernel declines through
// KernelDef::accepts) falls back to ref.
#include "kernels/cpu/cpu_families.hpp"
#include "runtime/table_backend.hpp"

namespace pock {

const KernelTable& cpu_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
#define POCK_CPU_FAMILY(family) cpu::register_##family(t);
#include "kernels/cpu/cpu_families.def"
#undef POCK_CPU_FAMILY
    return t;
  }();
  return table;
}

pock_status builtin_backend_init_cpu(pock_backend_v1* out) { return fill_table_backend(out, "cpu", &cpu_kernels()); }

}  // namespace pock
