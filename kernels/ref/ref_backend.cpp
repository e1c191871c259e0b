// The reference backend: every op, plain loops, the oracle other backends are tested against.
#include "runtime/table_backend.hpp"

namespace pock {

#define POCK_OP_FAMILY(family) void register_ref_##family(KernelTable& table);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY

const KernelTable& ref_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
#define POCK_OP_FAMILY(family) register_ref_##family(t);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY
    return t;
  }();
  return table;
}

pock_status builtin_backend_init_ref(pock_backend_v1* out) { return fill_table_backend(out, "ref", &ref_kernels()); }

}  // namespace pock
