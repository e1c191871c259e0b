// A convolution whose blob names its cpu algorithm (attribute "cpu_algorithm", recorded per op by
// `pockc compile --profile` from `pockc tune`'s measurements; ir/conv_algorithm.hpp) runs that
// algorithm and no other: conv2d.cpp and conv_grad.cpp hand such an op here before their rules.
// An algorithm that cannot run the op (Winograd on a 1x1 layer, XNNPACK on a trainable weight, a
// library this build lacks) is an error naming the op, not a silent fallback: `pockc tune` learns
// from it that the algorithm is no candidate, and a blob tuned on another build says why it does
// not open here. oneDNN is no candidate: it allocates on the heap in every primitive execution
// (its argument map, inside the library, whatever the scratchpad mode), and a step must not.
#pragma once
#include "ir/conv_algorithm.hpp"
#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// Whether the op names an algorithm (then prepare it with prepare_chosen_conv).
bool names_conv_algorithm(const pock_op_desc& op);

// Makes the named algorithm's kernel the op's state. `direction`: Conv2d's forward convolution, or
// the input gradient of Conv2dGradInput / ConvTranspose2d.
Status prepare_chosen_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction, KernelScope& scope,
                           void** state);

// Tests count the kernels made through a named algorithm, to know which one ran.
namespace conv_algorithm_testing {
int kernels_made(ConvAlgorithm algorithm);
}  // namespace conv_algorithm_testing

}  // namespace pock::cpu
