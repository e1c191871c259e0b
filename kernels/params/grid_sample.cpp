#include "kernels/params/grid_sample.hpp"

#include <string>
#include <utility>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

bool grid_sample_mode_from_name(std::string_view name, GridSampleMode* out) {
  static const std::pair<std::string_view, GridSampleMode> kNames[] = {
      {"bilinear", GridSampleMode::kBilinear}, {"linear", GridSampleMode::kBilinear},
      {"nearest", GridSampleMode::kNearest},   {"bicubic", GridSampleMode::kBicubic},
      {"cubic", GridSampleMode::kBicubic}};
  for (const auto& [text, value] : kNames) {
    if (text == name) return *out = value, true;
  }
  return false;
}

bool grid_padding_from_name(std::string_view name, GridPadding* out) {
  static const std::pair<std::string_view, GridPadding> kNames[] = {
      {"zeros", GridPadding::kZeros}, {"border", GridPadding::kBorder}, {"reflection", GridPadding::kReflection}};
  for (const auto& [text, value] : kNames) {
    if (text == name) return *out = value, true;
  }
  return false;
}

Status parse(const pock_op_desc& op, GridSampleParams* out) {
  AttrReader r(op);
  const std::string_view mode = r.text("mode", "bilinear");
  if (!grid_sample_mode_from_name(mode, &out->mode)) {
    r.invalid("mode", "must be bilinear, nearest or bicubic, got '" + std::string(mode) + "'");
  }
  const std::string_view padding = r.text("padding_mode", "zeros");
  if (!grid_padding_from_name(padding, &out->padding)) {
    r.invalid("padding_mode", "must be zeros, border or reflection, got '" + std::string(padding) + "'");
  }
  out->align_corners = r.integer("align_corners", 0) != 0;
  return r.status();
}

}  // namespace pock::params
