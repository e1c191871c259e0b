// Reference kernels of the norm family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_norm(KernelTable& t) { (void)t; }

}  // namespace pock
