// Gradient rules of the norm family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_norm_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
