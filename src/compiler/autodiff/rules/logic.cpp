// The logic family has no gradient rules: its outputs are bool or integer, and autodiff's walk
// from the trained parameters stops at non-float tensors, so a comparison inside a training graph
// (a mask that Where then applies) is never asked for one. Where trains through its data inputs.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_logic_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
