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
};

Status parse(const pock_op_desc& op, BlockQuantParams* out);

}  // namespace pock::params
