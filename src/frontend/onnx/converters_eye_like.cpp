// ONNX EyeLike: ones on diagonal k of a 2-D tensor shaped like the input, zeros elsewhere. Its
// value depends on the input's shape alone, which pock knows at import, so it becomes a constant.
#include <string>

#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import {
namespace {

Status convert_eye_like(NodeView& node) {
  const Value& x = node.value(0);
  if (x.shape.size() != 2) return node.input_error(0, "must be 2-D, got " + shape_str(x.shape));
  POCK_ASSIGN_OR_RETURN(int64_t k, node.attrs().get_int("k", 0));
  DType dtype = x.dtype;
  if (node.attrs().has("dtype")) {
    POCK_ASSIGN_OR_RETURN(int64_t elem_type, node.attrs().get_int("dtype", 0));
    POCK_ASSIGN_OR_RETURN(dtype, fold::onnx_dtype(node, elem_type));
  }
  POCK_RETURN_IF_ERROR(fold::check_folded_size(node, x.shape));
  HostTensor eye = HostTensor::zeros(dtype, x.shape);
  const int64_t rows = x.shape[0], cols = x.shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r + k;
    if (c < 0 || c >= cols) continue;
    if (eye.is_float()) eye.f[r * cols + c] = 1.0;
    else eye.i[r * cols + c] = 1;
  }
  node.bind_constant(0, std::move(eye));
  return Status::ok();
}

}  // namespace

void register_eye_like_converters(std::unordered_map<std::string, Converter>& t) { t["EyeLike"] = convert_eye_like; }

}  // namespace pock::onnx_import
