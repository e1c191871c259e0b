// Typed parameters of the block_quant family (LinearQ, LinearQInputGrad, GatherQ), parsed once at
// prepare by one parser that every backend shares.
#pragma once
#include <cstdint>

#include "ir/block_format.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct BlockQuantParams {
  BlockFormat format = BlockFormat::kQ8_0;
  int64_t in_features = 0;  // values per weight row
  int64_t row_bytes = 0;    // bytes per weight row (the schema checked the weight's dims[1])
  int64_t row_blocks = 0;   // blocks per weight row
  // Attribute compute "int8" (recipe frozen_matmul): the activations (LinearQ) or the output
  // gradient (LinearQInputGrad) are quantized to int8 per 32-value block and multiplied with
  // the weight's integers (block_int8_view); "f32" (default): exact against the decoded weight.
  bool int8 = false;
  // LinearQCrossEntropy: SoftmaxCrossEntropy's attributes.
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

Status parse(const pock_op_desc& op, BlockQuantParams* out);

}  // namespace pock::params
