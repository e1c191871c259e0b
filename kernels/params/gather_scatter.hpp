// Typed parameters of the gather_scatter family (GatherElements, ScatterElements, GatherND, ScatterND), parsed once at
// prepare by one parser every backend shares.
#pragma once
#include <cstdint>
#include <string_view>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// How ScatterElements combines an update with the value already at its position (ONNX names).
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

struct GatherScatterParams {
  int64_t axis = 0;        // as given; negative counts from the end
  int64_t batch_dims = 0;  // GatherND, ScatterND (pock's, for GatherND's gradient): leading axes data and indices share
  ScatterReduction reduction = ScatterReduction::kNone;
};

Status parse(const pock_op_desc& op, GatherScatterParams* out);
// The reduction named by ONNX's `reduction` attribute; false for an unknown name.
bool scatter_reduction_from_name(std::string_view name, ScatterReduction* out);

}  // namespace pock::params
