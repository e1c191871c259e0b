// The quantize_conv family has no reverse-mode rules: its integer convolutions are inference only,
// as the quantize family's ops are (rules/quantize.cpp), so a loss that reaches a trainable value
// through one is refused when the train function is built.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_quantize_conv_gradients(GradRegistry&) {}

}  // namespace pock
