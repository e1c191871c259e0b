// The activation_mask family has no gradient rules: ClipMask's u8 output carries no gradient and
// MaskGrad only ever appears in a backward pass.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_activation_mask_gradients(GradRegistry&) {}

}  // namespace pock
