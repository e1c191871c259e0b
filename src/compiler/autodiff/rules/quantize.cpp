// The quantize family has no reverse-mode rules: its ops are inference only (rounding has no
// useful derivative, and pock does not train through fake quantization, docs/ops.md), so a loss
// that depends on a trainable value through one is refused when the train function is built.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_quantize_gradients(GradRegistry&) {}

}  // namespace pock
