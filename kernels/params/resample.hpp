// Typed parameters of the resample family (Resize, ResizeGrad), parsed once at prepare by one
// parser every backend shares. Names and meanings are ONNX Resize's.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "pock/backend.h"
#include "pock/status.hpp"
#include "pock/types.hpp"

namespace pock::params {

enum class ResizeMode { kNearest, kLinear, kCubic };
// How an output coordinate maps to an input one (ONNX coordinate_transformation_mode; its
// tf_crop_and_resize is not among them).
enum class ResizeCoordinates { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn };
// Which neighbour `nearest` takes (ONNX nearest_mode).
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  NearestRounding nearest = NearestRounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  // Per axis: the scale of the coordinate mapping (output / input, as ONNX's scales input gives it,
  // which need not equal the ratio of the sizes after flooring). 1 where absent.
  std::array<double, kMaxRank> scales{1, 1, 1, 1, 1, 1, 1, 1};
};

Status parse(const pock_op_desc& op, ResizeParams* out);
// Name lookups shared by the schema and the parser: false for an unknown name.
bool resize_mode_from_name(std::string_view name, ResizeMode* out);
bool resize_coordinates_from_name(std::string_view name, ResizeCoordinates* out);
bool nearest_rounding_from_name(std::string_view name, NearestRounding* out);

}  // namespace pock::params
