// The training family on cuda is two files: training.cu (accumulation, clipping, the optimizer
// updates; it registers the family) and training_loss.cu (the losses and their gradients).
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cuda {

void register_training_losses(KernelTable& table);

// Blocks of the partial-sum passes: enough to fill a large GPU; the final pass adds them in order.
constexpr int kPartialBlocks = 512;
constexpr int kReduceThreads = 256;

}  // namespace pock::cuda
