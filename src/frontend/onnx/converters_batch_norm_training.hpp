// ONNX BatchNormalization with training_mode = 1 whose updated running statistics the model
// reads: the batch statistics and the new running mean and variance as the outputs ONNX defines.
#pragma once
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// y with the batch's mean and (biased) variance; outputs 1 and 2 the running mean and variance
// blended with them by `momentum`, as ONNX's reference computes them. Written with pock's
// elementwise ops and reductions, so y trains through them; the running statistics are values
// the model returns, not state updated in place.
Status convert_batch_norm_training(NodeView& node, double epsilon, double onnx_momentum);

}  // namespace pock::onnx_import
