// Gradient rules of the reduce family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_reduce_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
