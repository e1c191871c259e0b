// ONNX RoiAlign: one pock op with the same attributes (opset_adapters.cpp gives models before
// opset 16 their implied coordinate_transformation_mode, output_half_pixel).
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_roi_align(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", "avg"));
  POCK_ASSIGN_OR_RETURN(std::string coordinates, node.attrs().get_string("coordinate_transformation_mode", "half_pixel"));
  POCK_ASSIGN_OR_RETURN(int64_t height, node.attrs().get_int("output_height", 1));
  POCK_ASSIGN_OR_RETURN(int64_t width, node.attrs().get_int("output_width", 1));
  POCK_ASSIGN_OR_RETURN(int64_t sampling_ratio, node.attrs().get_int("sampling_ratio", 0));
  POCK_ASSIGN_OR_RETURN(double spatial_scale, node.attrs().get_float("spatial_scale", 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId rois, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId batch, node.input(2));
  return node.emit_final("RoiAlign", {x, rois, batch},
                         Attrs{{"mode", mode}, {"coordinate_transformation_mode", coordinates}, {"output_height", height},
                               {"output_width", width}, {"sampling_ratio", sampling_ratio}, {"spatial_scale", spatial_scale}});
}

}  // namespace

void register_roi_align_converters(std::unordered_map<std::string, Converter>& t) { t["RoiAlign"] = convert_roi_align; }

}  // namespace pock::onnx_import
