#include "models/layers.hpp"

#include <cmath>

namespace pock::models {

TensorId conv2d(Params& p, TensorId x, const std::string& name, const ConvSpec& spec) {
  // torch.nn.init's fan_out for a conv weight [out, in/groups, k, k] is out * k * k; the ReLU gain
  // sqrt(2) makes std = sqrt(2 / fan_out).
  const double fan_out = static_cast<double>(spec.out * spec.kernel * spec.kernel);
  const TensorId w =
      p.normal(name + ".weight", {spec.out, spec.in / spec.groups, spec.kernel, spec.kernel}, std::sqrt(2.0 / fan_out));
  const int64_t pad = spec.padding >= 0 ? spec.padding : (spec.kernel - 1) / 2;
  Conv2dOptions options;
  options.strides = {spec.stride, spec.stride};
  options.pads = {pad, pad, pad, pad};
  options.groups = spec.groups;
  return p.builder().named(name).conv2d(x, w, kNoTensor, options);
}

TensorId batch_norm2d(Params& p, TensorId x, const std::string& name, int64_t channels) {
  const TensorId gamma = p.fill(name + ".weight", {channels}, 1.0f);
  const TensorId beta = p.fill(name + ".bias", {channels}, 0.0f);
  const TensorId mean = p.state(name + ".running_mean", {channels}, 0.0f);
  const TensorId var = p.state(name + ".running_var", {channels}, 1.0f);
  return p.builder().named(name).batch_norm(x, gamma, beta, mean, var, 1e-5);
}

TensorId linear(Params& p, TensorId x, const std::string& name, int64_t in, int64_t out, bool bias,
                const LinearInit& init) {
  TensorId w = kNoTensor, b = kNoTensor;
  if (init.normal_std > 0) {
    w = p.normal(name + ".weight", {out, in}, init.normal_std);
    if (bias) b = p.fill(name + ".bias", {out}, 0.0f);
  } else {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    w = p.uniform(name + ".weight", {out, in}, bound);
    if (bias) b = p.uniform(name + ".bias", {out}, bound);
  }
  return p.builder().named(name).linear(x, w, b);
}

TensorId layer_norm(Params& p, TensorId x, const std::string& name, int64_t dim, double eps) {
  const TensorId gamma = p.fill(name + ".weight", {dim}, 1.0f);
  const TensorId beta = p.fill(name + ".bias", {dim}, 0.0f);
  return p.builder().named(name).layer_norm(x, gamma, beta, -1, eps);
}

TensorId split_heads(ModelBuilder& b, TensorId x, int64_t heads, int64_t head_dim) {
  return b.transpose(b.reshape(x, {0, 0, heads, head_dim}), {0, 2, 1, 3});
}

TensorId merge_heads(ModelBuilder& b, TensorId x) { return b.reshape(b.transpose(x, {0, 2, 1, 3}), {0, 0, -1}); }

}  // namespace pock::models
