// Typed parameters of the quantize family, parsed once at prepare by one parser every backend
// shares. Names and meanings are ONNX's.
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct QuantizeParams {
  // QuantizeLinear / DequantizeLinear: the axis a per-axis scale runs along (as given; negative
  // counts from the end). Unused when the scale is one value.
  int64_t axis = 1;
};

Status parse(const pock_op_desc& op, QuantizeParams* out);

}  // namespace pock::params
