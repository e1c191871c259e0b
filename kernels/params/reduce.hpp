// Typed parameters of the reduce family (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ...) and of the reduction
// gradients (ReduceSumGrad, ReduceMaxGrad, ReduceProdGrad), parsed once at prepare by one parser every backend
// shares: which dims of the full tensor are reduced; and of ArgMax / ArgMin.
#pragma once
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct ReduceParams {
  bool reduced[POCK_TENSOR_MAX_RANK] = {};  // per dim of the full (unreduced) tensor; "axes" absent: all
  double scale = 1.0;                       // ReduceSumGrad (a mean's 1/n)
};

// The full tensor is the input of a reduction and the output of its gradient.
Status parse(const pock_op_desc& op, ReduceParams* out);

// ArgMax, ArgMin.
struct ArgExtremumParams {
  int32_t axis = 0;                // normalized against the input's rank
  bool select_last_index = false;  // ties: the last index instead of the first
};

Status parse(const pock_op_desc& op, ArgExtremumParams* out);

}  // namespace pock::params
