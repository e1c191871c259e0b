// ONNX GridSample (opset 16 on 4-D inputs; opset 20 renames the modes linear / cubic, which pock
// accepts too): one pock op with the same attributes.
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_grid_sample(NodeView& node) {
  if (node.value(0).shape.size() != 4) {
    return node.unsupported("GridSample of a rank-" + std::to_string(node.value(0).shape.size()) +
                            " input; pock samples 4-D [N, C, H, W] inputs");
  }
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", "bilinear"));
  POCK_ASSIGN_OR_RETURN(std::string padding, node.attrs().get_string("padding_mode", "zeros"));
  POCK_ASSIGN_OR_RETURN(int64_t align_corners, node.attrs().get_int("align_corners", 0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId grid, node.input(1));
  return node.emit_final("GridSample", {x, grid},
                         Attrs{{"mode", mode}, {"padding_mode", padding}, {"align_corners", align_corners}});
}

}  // namespace

void register_grid_sample_converters(std::unordered_map<std::string, Converter>& t) { t["GridSample"] = convert_grid_sample; }

}  // namespace pock::onnx_import
