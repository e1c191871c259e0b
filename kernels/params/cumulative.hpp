// Typed parameters of the cumulative family (CumSum), parsed once at prepare by one parser every
// backend shares. Names and meanings are ONNX CumSum's, with its axis input made an attribute.
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct CumulativeParams {
  int32_t axis = 0;        // normalized against the input's rank
  bool exclusive = false;  // y[j] sums x[i] for i < j (not i <= j)
  bool reverse = false;    // the sums run from the last element toward the first
};

Status parse(const pock_op_desc& op, CumulativeParams* out);

}  // namespace pock::params
