// Reference kernels of the sequence family.
#include "kernels/ref/ref_util.hpp"

namespace pock {

void register_ref_sequence(KernelTable& t) { (void)t; }

}  // namespace pock
