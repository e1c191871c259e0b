// Reference kernels of the linalg family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_linalg(KernelTable& t) { (void)t; }

}  // namespace pock
