// MobileNetV2 as torchvision builds it (torchvision/models/mobilenetv2.py): the same channel
// rounding, module indices and therefore state_dict names, e.g. features.2.conv.1.0.weight.
#include <algorithm>
#include <string>

#include "models/layers.hpp"
#include "pock/compiler/models.hpp"

namespace pock::models {
namespace {

// torchvision's _make_divisible: round to a multiple of `divisor`, never more than 10% down.
int64_t make_divisible(double v, int64_t divisor) {
  int64_t rounded = std::max(divisor, static_cast<int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

// Conv2dNormActivation: <name>.0 conv, <name>.1 BatchNorm, then ReLU6.
TensorId conv_bn_relu6(Params& p, TensorId x, const std::string& name, const ConvSpec& spec) {
  const TensorId y = batch_norm2d(p, conv2d(p, x, name + ".0", spec), name + ".1", spec.out);
  return p.builder().named(name + ".2").relu6(y);
}

// InvertedResidual: [1x1 expand] -> 3x3 depthwise -> 1x1 linear projection, plus the input when
// the shape is kept. Module indices shift by one when there is no expansion (t = 1).
TensorId inverted_residual(Params& p, TensorId x, const std::string& name, int64_t in, int64_t out, int64_t stride,
                           int64_t expand_ratio) {
  const int64_t hidden = in * expand_ratio;
  int index = 0;
  auto next = [&] { return name + ".conv." + std::to_string(index++); };
  TensorId h = x;
  if (expand_ratio != 1) h = conv_bn_relu6(p, h, next(), {.in = in, .out = hidden, .kernel = 1});
  h = conv_bn_relu6(p, h, next(), {.in = hidden, .out = hidden, .kernel = 3, .stride = stride, .groups = hidden});
  h = conv2d(p, h, next(), {.in = hidden, .out = out, .kernel = 1});
  h = batch_norm2d(p, h, next(), out);
  if (stride == 1 && in == out) h = p.builder().named(name + ".add").add(x, h);
  return h;
}

Status check(const MobileNetV2Config& c) {
  if (c.batch < 1 || c.resolution < 1 || c.num_classes < 1 || !(c.width_mult > 0) || c.round_nearest < 1 ||
      !(c.dropout >= 0 && c.dropout < 1)) {
    return Status(Code::kInvalidArgument,
                  "mobilenet_v2: batch, resolution, num_classes, round_nearest must be >= 1, width_mult > 0, "
                  "dropout in [0, 1)");
  }
  for (const InvertedResidualStage& s : c.stages) {
    if (s.expand_ratio < 1 || s.channels < 1 || s.blocks < 1 || (s.stride != 1 && s.stride != 2)) {
      return Status(Code::kInvalidArgument, "mobilenet_v2: a stage needs t, c, n >= 1 and stride 1 or 2");
    }
  }
  return Status::ok();
}

}  // namespace

std::vector<InvertedResidualStage> mobilenet_v2_default_stages() {
  return {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
}

MobileNetV2Config mobilenet_v2_config() {
  MobileNetV2Config c;
  c.batch = 8;
  c.resolution = 128;
  return c;
}

Result<Graph> mobilenet_v2(const MobileNetV2Config& c) {
  POCK_RETURN_IF_ERROR(check(c));
  ModelBuilder b;
  Params p(b, c.seed);
  const auto stages = c.stages.empty() ? mobilenet_v2_default_stages() : c.stages;
  int64_t channels = make_divisible(32 * c.width_mult, c.round_nearest);
  const int64_t last_channels = make_divisible(1280 * std::max(1.0, c.width_mult), c.round_nearest);

  TensorId x = b.input("image", DType::kF32, {c.batch, 3, c.resolution, c.resolution});
  x = conv_bn_relu6(p, x, "features.0", {.in = 3, .out = channels, .kernel = 3, .stride = 2});
  int feature = 1;
  for (const InvertedResidualStage& stage : stages) {
    const int64_t out = make_divisible(static_cast<double>(stage.channels) * c.width_mult, c.round_nearest);
    for (int64_t i = 0; i < stage.blocks; ++i) {
      x = inverted_residual(p, x, "features." + std::to_string(feature++), channels, out, i == 0 ? stage.stride : 1,
                            stage.expand_ratio);
      channels = out;
    }
  }
  x = conv_bn_relu6(p, x, "features." + std::to_string(feature), {.in = channels, .out = last_channels, .kernel = 1});
  x = b.flatten(b.named("avgpool").global_avg_pool(x), 1);
  if (c.dropout > 0) x = b.named("classifier.0").dropout(x, c.dropout);
  b.output(linear(p, x, "classifier.1", last_channels, c.num_classes, true, {.normal_std = 0.01}), "logits");
  return b.finish();
}

}  // namespace pock::models
