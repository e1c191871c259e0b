#include "fuzz_support.hpp"

#include <cstring>

#include "blob/format.hpp"
#include "blob/reader.hpp"
#include "pock/compiler/builder.hpp"

namespace pock::fuzz {
namespace {

// `recipe_json` empty: an inference-only blob. Empty bytes when anything fails.
std::vector<uint8_t> compiled(const Graph& graph, const char* recipe_json) {
  Result<Recipe> recipe = parse_recipe(recipe_json[0] ? recipe_json : "{}");
  if (!recipe.is_ok()) return {};
  Result<std::vector<uint8_t>> blob = compile(graph, recipe_json[0] ? &recipe.value() : nullptr);
  return blob.is_ok() ? std::move(blob.value()) : std::vector<uint8_t>{};
}

}  // namespace

Graph mlp_graph() {
  ModelBuilder b;
  const TensorId ids = b.input("tokens", DType::kI64, {2, 3});
  TensorId h = b.embedding(b.parameter_uniform("embed.weight", {10, 8}, 0.5, 1), ids);
  h = b.layer_norm(h, b.parameter_fill("norm.weight", {8}, 1.0f), b.parameter_fill("norm.bias", {8}, 0.0f));
  h = b.flatten(h, 1);
  h = b.gelu(b.named("fc1").linear(h, b.parameter_kaiming_uniform("fc1.weight", {6, 24}, 2),
                                  b.parameter_kaiming_uniform("fc1.bias", {6}, 3, 24)));
  b.output(b.named("fc2").linear(h, b.parameter_kaiming_uniform("fc2.weight", {4, 6}, 4),
                                 b.parameter_kaiming_uniform("fc2.bias", {4}, 5, 6)),
           "logits");
  return std::move(b.finish().value());
}

namespace {

// Conv2d -> BatchNorm -> Relu6 -> GlobalAvgPool -> Linear.
Graph cnn_graph() {
  ModelBuilder b;
  const TensorId image = b.input("image", DType::kF32, {2, 3, 6, 6});
  Conv2dOptions same;
  same.pads = {1, 1, 1, 1};
  TensorId h = b.named("conv").conv2d(image, b.parameter_kaiming_uniform("conv.weight", {4, 3, 3, 3}, 6), kNoTensor, same);
  h = b.named("bn").batch_norm(h, b.parameter_fill("bn.weight", {4}, 1.0f), b.parameter_fill("bn.bias", {4}, 0.0f),
                               b.state("bn.running_mean", {4}, std::vector<float>(4, 0.0f)),
                               b.state("bn.running_var", {4}, std::vector<float>(4, 1.0f)));
  h = b.flatten(b.global_avg_pool(b.relu6(h)));
  b.output(b.named("fc").linear(h, b.parameter_kaiming_uniform("fc.weight", {3, 4}, 7),
                                b.parameter_kaiming_uniform("fc.bias", {3}, 8, 4)),
           "logits");
  return std::move(b.finish().value());
}

constexpr const char* kMlpRecipe = R"({"optimizer": {"type": "adamw", "lr": 0.01, "weight_decay": 0.01},
  "schedule": {"type": "linear_warmup", "warmup_steps": 2, "total_steps": 10}, "clip_grad_norm": 1.0})";
constexpr const char* kCnnRecipe = R"({"optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": true},
  "schedule": {"type": "cosine", "total_steps": 20}, "grad_accumulation": 2,
  "trainable": [{"match": "fc.*"}, {"match": "bn.bias"}, {"match": "conv.weight", "channels": 2}]})";

}  // namespace

std::vector<uint8_t> mlp_blob() { return compiled(mlp_graph(), kMlpRecipe); }

std::vector<SeedBlob> seed_blobs() {
  return {{"mlp_adamw_clip", mlp_blob()}, {"cnn_sparse_sgd", compiled(cnn_graph(), kCnnRecipe)},
          {"mlp_infer_only", compiled(mlp_graph(), "")}};
}

void repair_blob_checksums(std::vector<uint8_t>& bytes) {
  if (bytes.size() < sizeof(blob::Header)) return;
  blob::Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.section_count == 0 || h.section_count > blob::kMaxSections) return;
  const size_t table_end = sizeof(h) + size_t{h.section_count} * sizeof(blob::SectionEntry);
  if (table_end > bytes.size()) return;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    blob::SectionEntry s;
    uint8_t* at = bytes.data() + sizeof(h) + i * sizeof(s);
    std::memcpy(&s, at, sizeof(s));
    if (s.offset > bytes.size() || s.size > bytes.size() - s.offset) continue;
    s.crc = blob::crc32(bytes.data() + s.offset, s.size);
    std::memcpy(at, &s, sizeof(s));
  }
  h.header_crc = 0;
  std::memcpy(bytes.data(), &h, sizeof(h));
  h.header_crc = blob::crc32(bytes.data(), table_end);
  std::memcpy(bytes.data(), &h, sizeof(h));
}

void repair_checkpoint_checksum(std::vector<uint8_t>& bytes) {
  if (bytes.size() < 4) return;
  const uint32_t crc = blob::crc32(bytes.data(), bytes.size() - 4);
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
}

}  // namespace pock::fuzz
