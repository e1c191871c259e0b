#include "frontend/onnx/converters_batch_norm_training.hpp"

#include <cmath>

namespace pock::onnx_import {

using Ints = std::vector<int64_t>;

Status convert_batch_norm_training(NodeView& node, double epsilon, double onnx_momentum) {
  // A float32 attribute: 0.9f read back as the short decimal it stands for.
  const double momentum = std::round(onnx_momentum * 1e7) / 1e7;
  const Shape& xs = node.value(0).shape;
  if (xs.size() < 2) return node.input_error(0, "must be [N, C, ...], got " + shape_str(xs));
  const int64_t c = xs[1];
  Ints axes{0}, per_channel(xs.size(), 1);
  for (size_t d = 2; d < xs.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  per_channel[1] = c;
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId gamma, node.input(1));
  POCK_ASSIGN_OR_RETURN(TensorId beta, node.input(2));
  POCK_ASSIGN_OR_RETURN(TensorId running_mean, node.input_as_state(3));
  POCK_ASSIGN_OR_RETURN(TensorId running_var, node.input_as_state(4));
  const Attrs reduce{{"axes", axes}, {"keepdims", int64_t{1}}};
  POCK_ASSIGN_OR_RETURN(auto mean, node.emit("ReduceMean", {x}, reduce, "batch_mean"));
  POCK_ASSIGN_OR_RETURN(auto centered, node.emit("Sub", {x, mean[0]}, {}, "centered"));
  POCK_ASSIGN_OR_RETURN(auto squared, node.emit("Square", {centered[0]}, {}, "squared"));
  POCK_ASSIGN_OR_RETURN(auto var, node.emit("ReduceMean", {squared[0]}, reduce, "batch_var"));
  POCK_ASSIGN_OR_RETURN(auto var_eps, node.emit("ScaleShift", {var[0]}, Attrs{{"alpha", 1.0}, {"beta", epsilon}}, "var_eps"));
  POCK_ASSIGN_OR_RETURN(auto inv_std, node.emit("Rsqrt", {var_eps[0]}, {}, "inv_std"));
  POCK_ASSIGN_OR_RETURN(auto normalized, node.emit("Mul", {centered[0], inv_std[0]}, {}, "normalized"));
  POCK_ASSIGN_OR_RETURN(auto gamma_c, node.emit("Reshape", {gamma}, Attrs{{"shape", per_channel}}, "gamma_per_channel"));
  POCK_ASSIGN_OR_RETURN(auto beta_c, node.emit("Reshape", {beta}, Attrs{{"shape", per_channel}}, "beta_per_channel"));
  POCK_ASSIGN_OR_RETURN(auto scaled, node.emit("Mul", {normalized[0], gamma_c[0]}, {}, "scaled"));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("Add", {scaled[0], beta_c[0]}, {}, "y"));
  POCK_RETURN_IF_ERROR(node.bind_output(0, y[0]));
  // running' = running * momentum + batch * (1 - momentum), per channel.
  const std::pair<TensorId, TensorId> stats[] = {{running_mean, mean[0]}, {running_var, var[0]}};
  for (int k = 0; k < 2; ++k) {
    if (!node.has_output(1 + k)) continue;
    const std::string which = k == 0 ? "mean" : "var";
    POCK_ASSIGN_OR_RETURN(auto batch, node.emit("Reshape", {stats[k].second}, Attrs{{"shape", Ints{c}}}, "batch_" + which + "_c"));
    POCK_ASSIGN_OR_RETURN(auto kept, node.emit("ScaleShift", {stats[k].first}, Attrs{{"alpha", momentum}, {"beta", 0.0}},
                                               "kept_" + which));
    POCK_ASSIGN_OR_RETURN(auto added, node.emit("ScaleShift", {batch[0]}, Attrs{{"alpha", 1.0 - momentum}, {"beta", 0.0}},
                                                "added_" + which));
    POCK_ASSIGN_OR_RETURN(auto updated, node.emit("Add", {kept[0], added[0]}, {}, "running_" + which));
    POCK_RETURN_IF_ERROR(node.bind_output(1 + k, updated[0]));
  }
  return Status::ok();
}

}  // namespace pock::onnx_import
