// Reference kernels of the training family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_training(KernelTable& t) { (void)t; }

}  // namespace pock
