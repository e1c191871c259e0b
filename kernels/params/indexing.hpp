// Typed parameters of the indexing family (TopK, OneHot, ReverseSequence), parsed once at prepare
// by one parser per op that every backend shares. Names and meanings are ONNX's.
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct TopKParams {
  int64_t k = 1;
  int64_t axis = -1;  // as given; negative counts from the end
  bool largest = true;
};

struct OneHotParams {
  int64_t depth = 1;
  int64_t axis = -1;  // of the output; negative counts from the end
};

struct ReverseSequenceParams {
  int64_t batch_axis = 1;
  int64_t time_axis = 0;
};

Status parse(const pock_op_desc& op, TopKParams* out);
Status parse(const pock_op_desc& op, OneHotParams* out);
Status parse(const pock_op_desc& op, ReverseSequenceParams* out);

}  // namespace pock::params
