// Typed parameters of the roi_align family (RoiAlign, RoiAlignGrad), parsed once at prepare by one
// parser every backend shares. Names and meanings are ONNX RoiAlign's (opset 16).
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct RoiAlignParams {
  bool max = false;          // mode: avg (false) or max
  bool half_pixel = true;    // coordinate_transformation_mode half_pixel (else output_half_pixel)
  int64_t output_height = 1, output_width = 1;
  int64_t sampling_ratio = 0;  // samples per bin and axis; 0: ceil(roi size / output size)
  double spatial_scale = 1.0;
};

Status parse(const pock_op_desc& op, RoiAlignParams* out);

}  // namespace pock::params
