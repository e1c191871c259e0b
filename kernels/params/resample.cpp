#include "kernels/params/resample.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {
namespace {

template <typename Enum, size_t N>
bool lookup(const std::pair<std::string_view, Enum> (&names)[N], std::string_view name, Enum* out) {
  for (const auto& [text, value] : names) {
    if (text == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

}  // namespace

bool resize_mode_from_name(std::string_view name, ResizeMode* out) {
  static const std::pair<std::string_view, ResizeMode> kNames[] = {
      {"nearest", ResizeMode::kNearest}, {"linear", ResizeMode::kLinear}, {"cubic", ResizeMode::kCubic}};
  return lookup(kNames, name, out);
}

bool resize_coordinates_from_name(std::string_view name, ResizeCoordinates* out) {
  static const std::pair<std::string_view, ResizeCoordinates> kNames[] = {
      {"half_pixel", ResizeCoordinates::kHalfPixel},
      {"pytorch_half_pixel", ResizeCoordinates::kPytorchHalfPixel},
      {"align_corners", ResizeCoordinates::kAlignCorners},
      {"asymmetric", ResizeCoordinates::kAsymmetric},
      {"tf_half_pixel_for_nn", ResizeCoordinates::kTfHalfPixelForNn}};
  return lookup(kNames, name, out);
}

bool nearest_rounding_from_name(std::string_view name, NearestRounding* out) {
  static const std::pair<std::string_view, NearestRounding> kNames[] = {
      {"round_prefer_floor", NearestRounding::kRoundPreferFloor},
      {"round_prefer_ceil", NearestRounding::kRoundPreferCeil},
      {"floor", NearestRounding::kFloor},
      {"ceil", NearestRounding::kCeil}};
  return lookup(kNames, name, out);
}

Status parse(const pock_op_desc& op, ResizeParams* out) {
  AttrReader r(op);
  const std::string_view mode = r.text("mode", "nearest");
  if (!resize_mode_from_name(mode, &out->mode)) r.invalid("mode", "must be nearest, linear or cubic, got '" + std::string(mode) + "'");
  const std::string_view coordinates = r.text("coordinate_transformation_mode", "half_pixel");
  if (!resize_coordinates_from_name(coordinates, &out->coordinates)) {
    r.invalid("coordinate_transformation_mode", "unknown mode '" + std::string(coordinates) + "'");
  }
  const std::string_view nearest = r.text("nearest_mode", "round_prefer_floor");
  if (!nearest_rounding_from_name(nearest, &out->nearest)) r.invalid("nearest_mode", "unknown mode '" + std::string(nearest) + "'");
  out->cubic_a = r.real("cubic_coeff_a", -0.75);
  out->exclude_outside = r.integer("exclude_outside", 0) != 0;
  for (int32_t k = 0; k < op.num_attrs; ++k) {
    const pock_attr& a = op.attrs[k];
    if (!a.name || std::string_view(a.name) != "scales") continue;
    if (a.kind != POCK_ATTR_FLOATS || a.count > kMaxRank) {
      r.invalid("scales", "must be a list of at most " + std::to_string(kMaxRank) + " reals");
      break;
    }
    for (int64_t i = 0; i < a.count; ++i) {
      if (!(a.floats[i] > 0.0)) r.invalid("scales", "must be positive");
      out->scales[static_cast<size_t>(i)] = a.floats[i];
    }
  }
  return r.status();
}

}  // namespace pock::params
