// ResNet-18 as torchvision builds it (torchvision/models/resnet.py, BasicBlock): state_dict names
// conv1, bn1, layer{1..4}.{i}.{conv1,bn1,conv2,bn2,downsample.0,downsample.1}, fc.
#include <string>

#include "models/layers.hpp"
#include "pock/compiler/models.hpp"

namespace pock::models {
namespace {

// BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)); the shortcut is a strided 1x1
// conv + BatchNorm ("downsample") when the shape changes.
TensorId basic_block(Params& p, TensorId x, const std::string& name, int64_t in, int64_t out, int64_t stride) {
  ModelBuilder& b = p.builder();
  TensorId h = conv2d(p, x, name + ".conv1", {.in = in, .out = out, .kernel = 3, .stride = stride});
  h = b.named(name + ".relu1").relu(batch_norm2d(p, h, name + ".bn1", out));
  h = batch_norm2d(p, conv2d(p, h, name + ".conv2", {.in = out, .out = out, .kernel = 3}), name + ".bn2", out);
  TensorId shortcut = x;
  if (stride != 1 || in != out) {
    shortcut = conv2d(p, x, name + ".downsample.0", {.in = in, .out = out, .kernel = 1, .stride = stride});
    shortcut = batch_norm2d(p, shortcut, name + ".downsample.1", out);
  }
  return b.named(name + ".relu2").relu(b.named(name + ".add").add(h, shortcut));
}

}  // namespace

ResNetConfig resnet18_config() { return ResNetConfig{}; }

Result<Graph> resnet18(const ResNetConfig& c) {
  if (c.batch < 1 || c.resolution < 1 || c.num_classes < 1 || c.width < 1) {
    return Status(Code::kInvalidArgument, "resnet18: batch, resolution, num_classes and width must be >= 1");
  }
  for (int64_t n : c.blocks) {
    if (n < 1) return Status(Code::kInvalidArgument, "resnet18: every stage needs >= 1 block");
  }
  ModelBuilder b;
  Params p(b, c.seed);
  TensorId x = b.input("image", DType::kF32, {c.batch, 3, c.resolution, c.resolution});
  x = conv2d(p, x, "conv1", {.in = 3, .out = c.width, .kernel = 7, .stride = 2});
  x = b.named("relu").relu(batch_norm2d(p, x, "bn1", c.width));
  x = b.named("maxpool").max_pool2d(x, {.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  int64_t channels = c.width;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t out = c.width << stage;
    for (int64_t i = 0; i < c.blocks[static_cast<size_t>(stage)]; ++i) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      x = basic_block(p, x, name, channels, out, i == 0 && stage > 0 ? 2 : 1);
      channels = out;
    }
  }
  x = b.flatten(b.named("avgpool").global_avg_pool(x), 1);
  b.output(linear(p, x, "fc", channels, c.num_classes, true, {}), "logits");
  return b.finish();
}

}  // namespace pock::models
