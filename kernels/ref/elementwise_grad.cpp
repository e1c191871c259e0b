// Reference kernels of the elementwise_grad family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_elementwise_grad(KernelTable& t) { (void)t; }

}  // namespace pock
