// ONNX LRN as ops pock already trains (docs/ops.md):
//   y = x * (bias + alpha * mean_window(x^2)) ^ -beta
// where mean_window averages the squares of `size` neighbouring channels, counting the channels
// past the edges as zeros: ONNX's sum over the clipped window divided by size. The squares of
// [N, C, spatial...] are viewed as [N, 1, C, prod(spatial)] so that a 2-D average pool with a
// [size, 1] window and count_include_pad slides along the channels.
#include <cstring>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

// b^-beta: the exact unary ops where one exists, else Pow with a constant exponent.
Result<TensorId> power(NodeView& node, TensorId b, double beta) {
  const char* unary = beta == 0.5 ? "Rsqrt" : (beta == 1.0 ? "Reciprocal" : nullptr);
  if (unary) {
    POCK_ASSIGN_OR_RETURN(auto p, node.emit(unary, {b}, {}, "power"));
    return p[0];
  }
  const float e = static_cast<float>(-beta);
  std::vector<uint8_t> bytes(sizeof e);
  std::memcpy(bytes.data(), &e, sizeof e);
  const TensorId exponent = node.ctx().graph.add_constant(node.proto().output(0) + "/exponent", DType::kF32, Shape{}, bytes);
  POCK_ASSIGN_OR_RETURN(auto p, node.emit("Pow", {b, exponent}, {}, "power"));
  return p[0];
}

Status convert_lrn(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (x.size() < 3) return node.input_error(0, "must be [N, C, spatial...], got " + shape_str(x));
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be f32");
  POCK_ASSIGN_OR_RETURN(int64_t size, node.attrs().get_int("size", 0));
  if (size < 1) return node.error("attribute 'size' must be at least 1, got " + std::to_string(size));
  POCK_ASSIGN_OR_RETURN(double alpha, node.attrs().get_float("alpha", 1e-4));
  POCK_ASSIGN_OR_RETURN(double beta, node.attrs().get_float("beta", 0.75));
  POCK_ASSIGN_OR_RETURN(double bias, node.attrs().get_float("bias", 1.0));
  int64_t spatial = 1;
  for (size_t d = 2; d < x.size(); ++d) spatial *= x[d];
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(auto squares, node.emit("Square", {xt}, {}, "squares"));
  POCK_ASSIGN_OR_RETURN(auto rows, node.emit("Reshape", {squares[0]}, Attrs{{"shape", Shape{x[0], 1, x[1], spatial}}}, "channel_rows"));
  POCK_ASSIGN_OR_RETURN(auto mean, node.emit("AvgPool2d", {rows[0]},
                                             Attrs{{"kernel", Shape{size, 1}}, {"strides", Shape{1, 1}},
                                                   {"pads", Shape{before, 0, after, 0}}, {"count_include_pad", int64_t{1}}},
                                             "window_mean"));
  POCK_ASSIGN_OR_RETURN(auto back, node.emit("Reshape", {mean[0]}, Attrs{{"shape", x}}, "window_mean_nchw"));
  POCK_ASSIGN_OR_RETURN(auto base, node.emit("ScaleShift", {back[0]}, Attrs{{"alpha", alpha}, {"beta", bias}}, "base"));
  POCK_ASSIGN_OR_RETURN(TensorId scale, power(node, base[0], beta));
  return node.emit_final("Mul", {xt, scale});
}

}  // namespace

void register_lrn_converters(std::unordered_map<std::string, Converter>& t) { t["LRN"] = convert_lrn; }

}  // namespace pock::onnx_import
