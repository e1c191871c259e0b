// Reference kernels of the conv family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_conv(KernelTable& t) { (void)t; }

}  // namespace pock
