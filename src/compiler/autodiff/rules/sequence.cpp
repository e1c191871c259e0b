// Gradient rules of the sequence family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_sequence_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
