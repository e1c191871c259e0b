// ONNX MaxUnpool: X's values written into zeros of the output shape at the flat positions that
// MaxPool's indices name (flat over the whole output tensor, as onnxruntime reads them). That is
// ScatterElements on flattened tensors, which pock runs and differentiates (its gradient gathers
// dy back from those positions). The indices address MaxPool's inverse shape, (in - 1) * stride -
// pad_begin - pad_end + kernel per spatial axis; a larger output_shape (a constant) pads that with
// zeros at the end of each axis, as ONNX's example expects.
#include <cstring>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

Result<Shape> unpooled_shape(NodeView& node, const Shape& x) {
  const size_t spatial = x.size() - 2;
  POCK_ASSIGN_OR_RETURN(Ints kernel, node.attrs().get_ints("kernel_shape", {}));
  POCK_ASSIGN_OR_RETURN(Ints strides, node.attrs().get_ints("strides", Ints(spatial, 1)));
  POCK_ASSIGN_OR_RETURN(Ints pads, node.attrs().get_ints("pads", Ints(2 * spatial, 0)));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    return node.error("kernel_shape, strides and pads must match the " + std::to_string(spatial) + " spatial axes of " +
                      shape_str(x));
  }
  Shape out{x[0], x[1]};
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t size = (x[d + 2] - 1) * strides[d] - pads[d] - pads[d + spatial] + kernel[d];
    if (size < 1) return node.error("the unpooled size of spatial axis " + std::to_string(d) + " is " + std::to_string(size));
    out.push_back(size);
  }
  return out;
}

// The zeros appended to each axis of `unpooled` to reach output_shape (none without one).
Result<Ints> end_padding(NodeView& node, const Shape& unpooled) {
  Ints pads(2 * unpooled.size(), 0);
  if (!node.has_input(2)) return pads;
  POCK_ASSIGN_OR_RETURN(Ints shape, node.const_ints(2, "output_shape"));
  bool fits = shape.size() == unpooled.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) {
    fits = shape[d] >= unpooled[d] && (d >= 2 || shape[d] == unpooled[d]);
    if (fits) pads[unpooled.size() + d] = shape[d] - unpooled[d];
  }
  if (!fits) {
    return node.input_error(2, "(output_shape) must keep N and C and be no smaller than the unpooled shape " +
                                   shape_str(unpooled) + ", got " + shape_str(shape));
  }
  return pads;
}

Status convert_max_unpool(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (x.size() < 3) return node.input_error(0, "must be [N, C, spatial...], got " + shape_str(x));
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be f32");
  if (node.value(1).shape != x) return node.input_error(1, "(I) must have X's shape " + shape_str(x));
  POCK_ASSIGN_OR_RETURN(Shape out, unpooled_shape(node, x));
  POCK_ASSIGN_OR_RETURN(Ints padding, end_padding(node, out));
  const int64_t total = numel(out);
  POCK_ASSIGN_OR_RETURN(TensorId values, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(1));
  const Attrs one_row{{"shape", Shape{1, numel(x)}}};
  POCK_ASSIGN_OR_RETURN(auto value_row, node.emit("Reshape", {values}, one_row, "values_row"));
  POCK_ASSIGN_OR_RETURN(auto index_row, node.emit("Reshape", {indices}, one_row, "indices_row"));
  const TensorId zeros = node.ctx().graph.add_constant(node.proto().output(0) + "/zeros", DType::kF32, Shape{1, total},
                                                       std::vector<uint8_t>(static_cast<size_t>(total) * sizeof(float), 0));
  POCK_ASSIGN_OR_RETURN(auto scattered, node.emit("ScatterElements", {zeros, index_row[0], value_row[0]},
                                                  Attrs{{"axis", int64_t{1}}}, "scattered"));
  if (padding == Ints(padding.size(), 0)) return node.emit_final("Reshape", {scattered[0]}, Attrs{{"shape", out}});
  POCK_ASSIGN_OR_RETURN(auto shaped, node.emit("Reshape", {scattered[0]}, Attrs{{"shape", out}}, "unpooled"));
  return node.emit_final("Pad", {shaped[0]}, Attrs{{"pads", padding}});
}

}  // namespace

void register_max_unpool_converters(std::unordered_map<std::string, Converter>& t) { t["MaxUnpool"] = convert_max_unpool; }

}  // namespace pock::onnx_import
