// Reference kernels of the reduce family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_reduce(KernelTable& t) { (void)t; }

}  // namespace pock
