// Typed parameters of the grid_sample family (GridSample, GridSampleGrad), parsed once at prepare
// by one parser every backend shares. Names and meanings are ONNX GridSample's (opset 16; opset
// 20's names linear / cubic are the same modes).
#pragma once
#include <string_view>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

enum class GridSampleMode { kBilinear, kNearest, kBicubic };
// What a sample outside the input reads: 0, the nearest border pixel, or the input mirrored.
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kBilinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;  // -1 and 1 name the corner pixels' centres (else their outer edges)
};

Status parse(const pock_op_desc& op, GridSampleParams* out);
// Name lookups shared by the schema and the parser: false for an unknown name.
bool grid_sample_mode_from_name(std::string_view name, GridSampleMode* out);
bool grid_padding_from_name(std::string_view name, GridPadding* out);

}  // namespace pock::params
