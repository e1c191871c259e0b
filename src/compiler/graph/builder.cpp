// ModelBuilder: typed, sticky-error construction of a Graph. Every op method only assembles the
// documented op name and attributes (docs/ops.md) and goes through Graph::add_node, so shape
// inference and validation stay in the op schemas.
#include "pock/compiler/builder.hpp"
#include "ir/splitmix64.hpp"

#include <cmath>
#include <cstring>

namespace pock {
namespace {

// Uniform in [0, 1) from the top 53 bits of the hash of (seed, index).
double uniform01(uint64_t seed, uint64_t index) {
  return unit_interval(splitmix64(splitmix64(seed) ^ index));
}

bool valid_shape(const Shape& shape) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) return false;
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

// ---- state of the build -----------------------------------------------------------------------

void ModelBuilder::fail(Status s) {
  if (status_.is_ok()) status_ = std::move(s);
}

Result<Graph> ModelBuilder::finish() {
  if (!status_.is_ok()) return status_;
  Graph out = std::move(graph_);
  graph_ = Graph();
  return out;
}

const Shape& ModelBuilder::shape(TensorId id) const {
  static const Shape kNone;
  if (id < 0 || static_cast<size_t>(id) >= graph_.num_tensors()) return kNone;
  return graph_.tensor(id).shape;
}

DType ModelBuilder::dtype(TensorId id) const {
  if (id < 0 || static_cast<size_t>(id) >= graph_.num_tensors()) return DType::kF32;
  return graph_.tensor(id).dtype;
}

ModelBuilder& ModelBuilder::named(std::string node_name) {
  next_name_ = std::move(node_name);
  return *this;
}

// ---- tensors ------------------------------------------------------------------------------------

// Users select trainable parameters and feed inputs by name: a silently renamed duplicate would
// make a recipe miss it, so duplicates are errors here.
bool ModelBuilder::check_name(const std::string& what, const std::string& name) {
  if (!status_.is_ok()) return false;
  if (name.empty()) {
    fail(Status(Code::kInvalidArgument, "ModelBuilder: " + what + " needs a name"));
  } else if (graph_.find(name) != kNoTensor) {
    fail(Status(Code::kInvalidArgument, "ModelBuilder: " + what + " '" + name + "': the name is already used"));
  }
  return status_.is_ok();
}

TensorId ModelBuilder::input(std::string name, DType dtype, Shape shape) {
  if (!check_name("input", name)) return kNoTensor;
  if (!valid_shape(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: input '" + name + "' has invalid shape " + shape_str(shape)));
    return kNoTensor;
  }
  return graph_.add_input(std::move(name), dtype, std::move(shape));
}

TensorId ModelBuilder::parameter(std::string name, Shape shape, const std::vector<float>& values) {
  if (!check_name("parameter", name)) return kNoTensor;
  if (!valid_shape(shape) || static_cast<int64_t>(values.size()) != numel(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: parameter '" + name + "' of shape " + shape_str(shape) + " got " +
                                          std::to_string(values.size()) + " values"));
    return kNoTensor;
  }
  return graph_.add_parameter_f32(std::move(name), std::move(shape), values);
}

TensorId ModelBuilder::parameter_fill(std::string name, Shape shape, float value) {
  if (!valid_shape(shape)) return parameter(std::move(name), std::move(shape), {});  // reports the shape
  const std::vector<float> values(static_cast<size_t>(numel(shape)), value);
  return parameter(std::move(name), std::move(shape), values);
}

TensorId ModelBuilder::parameter_uniform(std::string name, Shape shape, double bound, uint64_t seed) {
  if (!valid_shape(shape)) return parameter(std::move(name), std::move(shape), {});
  if (!(bound >= 0.0) || !std::isfinite(bound)) {
    fail(Status(Code::kInvalidArgument, "ModelBuilder: parameter '" + name + "': bound must be finite and >= 0, got " +
                                            std::to_string(bound)));
    return kNoTensor;
  }
  std::vector<float> values(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((2.0 * uniform01(seed, i) - 1.0) * bound);
  return parameter(std::move(name), std::move(shape), values);
}

TensorId ModelBuilder::parameter_kaiming_uniform(std::string name, Shape shape, uint64_t seed, int64_t fan_in) {
  if (fan_in <= 0) {
    fan_in = 1;
    for (size_t d = 1; d < shape.size(); ++d) fan_in *= shape[d];
  }
  if (fan_in <= 0) {
    fail(Status(Code::kInvalidArgument, "ModelBuilder: parameter '" + name + "' of shape " + shape_str(shape) +
                                            " has no fan-in; pass fan_in"));
    return kNoTensor;
  }
  return parameter_uniform(std::move(name), std::move(shape), 1.0 / std::sqrt(static_cast<double>(fan_in)), seed);
}

TensorId ModelBuilder::state(std::string name, Shape shape, const std::vector<float>& values) {
  if (!check_name("state", name)) return kNoTensor;
  if (!valid_shape(shape) || static_cast<int64_t>(values.size()) != numel(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: state '" + name + "' of shape " + shape_str(shape) + " got " +
                                          std::to_string(values.size()) + " values"));
    return kNoTensor;
  }
  return add_state(std::move(name), std::move(shape), std::make_shared<const std::vector<uint8_t>>(to_bytes(values)));
}

TensorId ModelBuilder::cache(std::string name, Shape shape) {
  if (!check_name("cache", name)) return kNoTensor;
  if (!valid_shape(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: cache '" + name + "' has the invalid shape " + shape_str(shape)));
    return kNoTensor;
  }
  return add_state(std::move(name), std::move(shape), nullptr);
}

// f32 state: with initial values, or (none) a cache that starts at zero.
TensorId ModelBuilder::add_state(std::string name, Shape shape, std::shared_ptr<const std::vector<uint8_t>> values) {
  TensorDesc d;
  d.name = std::move(name);
  d.dtype = DType::kF32;
  d.shape = std::move(shape);
  d.kind = TensorKind::kState;
  d.cache = values == nullptr;
  d.data = std::move(values);
  return graph_.add_tensor(std::move(d));
}

TensorId ModelBuilder::constant(std::string name, Shape shape, const std::vector<float>& values) {
  if (!check_name("constant", name)) return kNoTensor;
  if (!valid_shape(shape) || static_cast<int64_t>(values.size()) != numel(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: constant '" + name + "' of shape " + shape_str(shape) + " got " +
                                          std::to_string(values.size()) + " values"));
    return kNoTensor;
  }
  return graph_.add_constant(std::move(name), DType::kF32, std::move(shape), to_bytes(values));
}

TensorId ModelBuilder::constant_i64(std::string name, Shape shape, const std::vector<int64_t>& values) {
  if (!check_name("constant", name)) return kNoTensor;
  if (!valid_shape(shape) || static_cast<int64_t>(values.size()) != numel(shape)) {
    fail(Status(Code::kShapeMismatch, "ModelBuilder: constant '" + name + "' of shape " + shape_str(shape) + " got " +
                                          std::to_string(values.size()) + " values"));
    return kNoTensor;
  }
  return graph_.add_constant(std::move(name), DType::kI64, std::move(shape), to_bytes(values));
}

void ModelBuilder::output(TensorId id, std::string name) {
  if (!status_.is_ok()) return;
  fail(graph_.mark_output(id, std::move(name)));
}

// ---- any op -------------------------------------------------------------------------------------

std::vector<TensorId> ModelBuilder::op(const std::string& op_name, std::vector<TensorId> inputs, Attrs attrs) {
  std::string node_name = std::move(next_name_);
  next_name_.clear();
  if (!status_.is_ok()) return {};
  auto outs = graph_.add_node(op_name, std::move(inputs), std::move(attrs), std::move(node_name));
  if (!outs.is_ok()) {
    fail(outs.status());
    return {};
  }
  return std::move(outs).value();
}

TensorId ModelBuilder::op1(const std::string& op_name, std::vector<TensorId> inputs, Attrs attrs) {
  const std::vector<TensorId> outs = op(op_name, std::move(inputs), std::move(attrs));
  return outs.empty() ? kNoTensor : outs[0];
}

// ---- elementwise --------------------------------------------------------------------------------

TensorId ModelBuilder::leaky_relu(TensorId x, double alpha) { return op1("LeakyRelu", {x}, {{"alpha", alpha}}); }

TensorId ModelBuilder::clip(TensorId x, std::optional<double> min, std::optional<double> max) {
  Attrs attrs;
  if (min) attrs.set("min", *min);
  if (max) attrs.set("max", *max);
  return op1("Clip", {x}, std::move(attrs));
}

TensorId ModelBuilder::gelu(TensorId x, bool tanh_approximation) {
  return op1("Gelu", {x}, {{"approximate", std::string(tanh_approximation ? "tanh" : "none")}});
}

TensorId ModelBuilder::cast(TensorId x, DType to) { return op1("Cast", {x}, {{"to", std::string(dtype_name(to))}}); }

TensorId ModelBuilder::scale_shift(TensorId x, double alpha, double beta) {
  return op1("ScaleShift", {x}, {{"alpha", alpha}, {"beta", beta}});
}

// ---- linalg -------------------------------------------------------------------------------------

TensorId ModelBuilder::matmul(TensorId a, TensorId b, bool transpose_a, bool transpose_b) {
  return op1("MatMul", {a, b},
             {{"transpose_a", int64_t{transpose_a ? 1 : 0}}, {"transpose_b", int64_t{transpose_b ? 1 : 0}}});
}

TensorId ModelBuilder::linear(TensorId x, TensorId w, TensorId b) {
  if (b == kNoTensor) return op1("Linear", {x, w});
  return op1("Linear", {x, w, b});
}

// ---- conv ---------------------------------------------------------------------------------------

TensorId ModelBuilder::conv2d(TensorId x, TensorId w, TensorId b, const Conv2dOptions& options) {
  Attrs attrs{{"strides", options.strides},
              {"pads", options.pads},
              {"dilations", options.dilations},
              {"groups", options.groups}};
  if (b == kNoTensor) return op1("Conv2d", {x, w}, std::move(attrs));
  return op1("Conv2d", {x, w, b}, std::move(attrs));
}

TensorId ModelBuilder::pool(const char* op_name, TensorId x, const Pool2dOptions& options) {
  Attrs attrs{{"kernel", options.kernel}, {"pads", options.pads}, {"ceil_mode", int64_t{options.ceil_mode ? 1 : 0}}};
  if (!options.strides.empty()) attrs.set("strides", options.strides);
  if (std::string_view(op_name) == "AvgPool2d") attrs.set("count_include_pad", int64_t{options.count_include_pad ? 1 : 0});
  return op1(op_name, {x}, std::move(attrs));
}

TensorId ModelBuilder::max_pool2d(TensorId x, const Pool2dOptions& options) { return pool("MaxPool2d", x, options); }
TensorId ModelBuilder::avg_pool2d(TensorId x, const Pool2dOptions& options) { return pool("AvgPool2d", x, options); }

// ---- norm ---------------------------------------------------------------------------------------

TensorId ModelBuilder::batch_norm(TensorId x, TensorId gamma, TensorId beta, TensorId running_mean,
                                  TensorId running_var, double eps) {
  return op1("BatchNorm", {x, gamma, beta, running_mean, running_var}, {{"eps", eps}});
}

BatchNormTrainOutputs ModelBuilder::batch_norm_train(TensorId x, TensorId gamma, TensorId beta, TensorId running_mean,
                                                     TensorId running_var, double eps, double momentum) {
  const auto outs = op("BatchNormTrain", {x, gamma, beta, running_mean, running_var}, {{"eps", eps}, {"momentum", momentum}});
  if (outs.size() != 3) return {};
  return {outs[0], outs[1], outs[2]};
}

LayerNormOutputs ModelBuilder::layer_norm_with_stats(TensorId x, TensorId gamma, TensorId beta, int64_t axis,
                                                     double eps) {
  const auto outs = op("LayerNorm", {x, gamma, beta}, {{"axis", axis}, {"eps", eps}});
  if (outs.size() != 3) return {};
  return {outs[0], outs[1], outs[2]};
}

RMSNormOutputs ModelBuilder::rms_norm_with_stats(TensorId x, TensorId gamma, int64_t axis, double eps) {
  const auto outs = op("RMSNorm", {x, gamma}, {{"axis", axis}, {"eps", eps}});
  if (outs.size() != 2) return {};
  return {outs[0], outs[1]};
}

TensorId ModelBuilder::softmax(TensorId x, int64_t axis) { return op1("Softmax", {x}, {{"axis", axis}}); }
TensorId ModelBuilder::log_softmax(TensorId x, int64_t axis) { return op1("LogSoftmax", {x}, {{"axis", axis}}); }

// ---- reduce -------------------------------------------------------------------------------------

TensorId ModelBuilder::reduce(const char* op_name, TensorId x, std::vector<int64_t> axes, bool keepdims) {
  return op1(op_name, {x}, {{"axes", std::move(axes)}, {"keepdims", int64_t{keepdims ? 1 : 0}}});
}

TensorId ModelBuilder::reduce_sum(TensorId x, std::vector<int64_t> axes, bool keepdims) {
  return reduce("ReduceSum", x, std::move(axes), keepdims);
}
TensorId ModelBuilder::reduce_mean(TensorId x, std::vector<int64_t> axes, bool keepdims) {
  return reduce("ReduceMean", x, std::move(axes), keepdims);
}
TensorId ModelBuilder::reduce_max(TensorId x, std::vector<int64_t> axes, bool keepdims) {
  return reduce("ReduceMax", x, std::move(axes), keepdims);
}

// ---- shape --------------------------------------------------------------------------------------

TensorId ModelBuilder::reshape(TensorId x, std::vector<int64_t> shape) {
  return op1("Reshape", {x}, {{"shape", std::move(shape)}});
}
TensorId ModelBuilder::flatten(TensorId x, int64_t axis) { return op1("Flatten", {x}, {{"axis", axis}}); }
TensorId ModelBuilder::transpose(TensorId x, std::vector<int64_t> perm) {
  return op1("Transpose", {x}, {{"perm", std::move(perm)}});
}
TensorId ModelBuilder::concat(std::vector<TensorId> xs, int64_t axis) { return op1("Concat", std::move(xs), {{"axis", axis}}); }

TensorId ModelBuilder::slice(TensorId x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                             std::vector<int64_t> axes, std::vector<int64_t> steps) {
  Attrs attrs{{"starts", std::move(starts)}, {"ends", std::move(ends)}};
  if (!axes.empty()) attrs.set("axes", std::move(axes));
  if (!steps.empty()) attrs.set("steps", std::move(steps));
  return op1("Slice", {x}, std::move(attrs));
}

std::vector<TensorId> ModelBuilder::split(TensorId x, int64_t axis, std::vector<int64_t> sizes) {
  return op("Split", {x}, {{"axis", axis}, {"split", std::move(sizes)}});
}

TensorId ModelBuilder::squeeze(TensorId x, std::vector<int64_t> axes) { return op1("Squeeze", {x}, {{"axes", std::move(axes)}}); }
TensorId ModelBuilder::unsqueeze(TensorId x, std::vector<int64_t> axes) {
  return op1("Unsqueeze", {x}, {{"axes", std::move(axes)}});
}
TensorId ModelBuilder::expand(TensorId x, std::vector<int64_t> shape) { return op1("Expand", {x}, {{"shape", std::move(shape)}}); }
TensorId ModelBuilder::pad(TensorId x, std::vector<int64_t> pads, double value) {
  return op1("Pad", {x}, {{"pads", std::move(pads)}, {"value", value}});
}

// ---- sequence -----------------------------------------------------------------------------------

TensorId ModelBuilder::gather(TensorId data, TensorId indices, int64_t axis) {
  return op1("Gather", {data, indices}, {{"axis", axis}});
}

TensorId ModelBuilder::rope(TensorId x, const RopeOptions& options, TensorId position) {
  std::vector<TensorId> inputs = {x};
  if (position != kNoTensor) inputs.push_back(position);
  return op1("Rope", std::move(inputs),
             {{"theta", options.theta},
              {"interleaved", int64_t{options.interleaved ? 1 : 0}},
              {"inverse", int64_t{options.inverse ? 1 : 0}}});
}

TensorId ModelBuilder::cached_attention(TensorId q, TensorId k, TensorId v, TensorId key_cache, TensorId value_cache,
                                        TensorId position, double scale) {
  return op1("CachedAttention", {q, k, v, key_cache, value_cache, position}, {{"scale", scale}});
}

TensorId ModelBuilder::causal_mask(TensorId scores, std::optional<double> value) {
  Attrs attrs;
  if (value) attrs.set("value", *value);
  return op1("CausalMask", {scores}, std::move(attrs));
}

TensorId ModelBuilder::dropout(TensorId x, double ratio) { return op1("Dropout", {x}, {{"ratio", ratio}}); }

DropoutOutputs ModelBuilder::dropout_train(TensorId x, TensorId step, double ratio, int64_t seed) {
  const auto outs = op("DropoutTrain", {x, step}, {{"ratio", ratio}, {"seed", seed}});
  if (outs.size() != 2) return {};
  return {outs[0], outs[1]};
}

}  // namespace pock
