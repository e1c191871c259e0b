// Gradient rules of the conv family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_conv_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
