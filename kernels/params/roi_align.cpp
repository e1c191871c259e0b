#include "kernels/params/roi_align.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, RoiAlignParams* out) {
  AttrReader r(op);
  const std::string_view mode = r.text("mode", "avg");
  if (mode != "avg" && mode != "max") r.invalid("mode", "must be avg or max, got '" + std::string(mode) + "'");
  out->max = mode == "max";
  const std::string_view coordinates = r.text("coordinate_transformation_mode", "half_pixel");
  if (coordinates != "half_pixel" && coordinates != "output_half_pixel") {
    r.invalid("coordinate_transformation_mode", "must be half_pixel or output_half_pixel, got '" + std::string(coordinates) + "'");
  }
  out->half_pixel = coordinates == "half_pixel";
  out->output_height = r.integer("output_height", 1);
  out->output_width = r.integer("output_width", 1);
  if (out->output_height < 1 || out->output_width < 1) r.invalid("output_height", "output sizes must be at least 1");
  out->sampling_ratio = r.integer("sampling_ratio", 0);
  if (out->sampling_ratio < 0) r.invalid("sampling_ratio", "must not be negative");
  out->spatial_scale = r.real("spatial_scale", 1.0);
  return r.status();
}

}  // namespace pock::params
