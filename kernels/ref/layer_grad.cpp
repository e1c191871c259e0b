// Reference kernels of the layer_grad family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_layer_grad(KernelTable& t) { (void)t; }

}  // namespace pock
