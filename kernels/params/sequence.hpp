// Typed parameters of the sequence family (Gather, Rope, CausalMask, Dropout) and of its gradients
// (layer_grad_sequence: GatherGrad, DropoutGrad), parsed once at prepare by one parser every
// backend shares.
#pragma once
#include <cstdint>
#include <limits>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct SequenceParams {
  int64_t axis = 0;                                       // Gather(Grad), as given
  double theta = 10000.0;                                 // Rope's base
  bool interleaved = false, inverse = false;              // Rope: pair layout, and the rotation back
  double value = -std::numeric_limits<double>::infinity();  // CausalMask's fill above the diagonal
  double ratio = 0.5;                                     // Dropout(Train, Grad)
  uint64_t seed = 0;                                      // DropoutTrain
  double scale = 1.0;                                     // CachedAttention's score scale
};

Status parse(const pock_op_desc& op, SequenceParams* out);

}  // namespace pock::params
