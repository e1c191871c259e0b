// LinearQCrossEntropy on the CUDA backend (block_quant_head.cu), registered with its family in
// block_quant.cu.
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cuda {

// Parses the parameters and reserves the workspace: the counts, one loss per row, a chunk's
// logits and, with compute "int8", the chunk's quantized rows and the weight's columns.
Status prepare_linear_q_cross_entropy(const pock_op_desc& op, void** state);
void release_linear_q_cross_entropy(void* state);
Status linear_q_cross_entropy(const KernelCall& c);

}  // namespace pock::cuda
