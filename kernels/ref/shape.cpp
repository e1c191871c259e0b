// Reference kernels of the shape family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_shape(KernelTable& t) { (void)t; }

}  // namespace pock
