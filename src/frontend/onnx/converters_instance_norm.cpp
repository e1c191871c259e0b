// ONNX InstanceNormalization -> LayerNorm over the spatial dims, then the per-channel scale and
// bias (docs/ops.md). On [N, C, spatial...] a LayerNorm from axis 2 normalizes each (n, c) plane
// over its spatial elements with the biased variance: instance normalization's statistics. Its
// kernels and gradients (input, and through Mul / Add the scale and bias) are LayerNorm's.
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

Status convert_instance_norm(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (x.size() < 3) return node.input_error(0, "must be [N, C, spatial...], got " + shape_str(x));
  const int64_t channels = x[1];
  for (int i = 1; i <= 2; ++i) {
    if (node.value(i).shape != Shape{channels}) {
      return node.input_error(i, std::string(i == 1 ? "(scale)" : "(B)") + " must be [C] = [" + std::to_string(channels) +
                                     "], got " + shape_str(node.value(i).shape));
    }
  }
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-5));
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId scale, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId bias, node.input(2));
  POCK_ASSIGN_OR_RETURN(auto normalized, node.emit("LayerNorm", {xt}, Attrs{{"axis", int64_t{2}}, {"eps", eps}}, "normalized"));
  // [C] -> [C, 1, ...]: one value per channel over the spatial dims.
  Ints spatial_axes;
  for (size_t d = 2; d < x.size(); ++d) spatial_axes.push_back(static_cast<int64_t>(d - 1));
  const Attrs per_channel{{"axes", spatial_axes}};
  POCK_ASSIGN_OR_RETURN(auto scale_c, node.emit("Unsqueeze", {scale}, per_channel, "scale_per_channel"));
  POCK_ASSIGN_OR_RETURN(auto bias_c, node.emit("Unsqueeze", {bias}, per_channel, "bias_per_channel"));
  POCK_ASSIGN_OR_RETURN(auto scaled, node.emit("Mul", {normalized[0], scale_c[0]}, {}, "scaled"));
  return node.emit_final("Add", {scaled[0], bias_c[0]});
}

}  // namespace

void register_instance_norm_converters(std::unordered_map<std::string, Converter>& t) {
  t["InstanceNormalization"] = convert_instance_norm;
}

}  // namespace pock::onnx_import
