// Backward ops are not differentiated again (no second-order training).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_layer_grad_gradients(GradRegistry& r) { (void)r; }

}  // namespace pock
