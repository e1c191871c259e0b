// The GGUF exporter: our quantizers against gguf-py's bytes (quantize_expected.bin), and export of
// a llama model that gguf-py wrote (tiny_llama.gguf, weights in F32/F16/Q8_0/Q4_0/Q4_1): changed
// weights come back exactly through the importer, untouched tensors and the metadata byte for
// byte, LoRA pairs merged as W + alpha/r B A or written as llama.cpp's adapter file; bad inputs
// are errors naming the weight.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"
#include "pock/compiler/gguf.hpp"
#include "support/file_bytes.hpp"

using namespace pock;

namespace {

using test::read_file_bytes;
const std::string kDir = std::string(POCK_TESTS_DIR) + "/frontend/gguf/";
const std::string kLlama = kDir + "tiny_llama.gguf";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("pock_gguf_export_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Every parameter of the model the importer builds from `path`, by transformers name.
models::WeightMap import_weights(const std::string& path) {
  auto g = import_gguf(path, {1, 4});
  INFO(g.status().message());
  REQUIRE(g.is_ok());
  models::WeightMap w;
  for (const TensorDesc& t : g->tensors()) {
    if (t.kind != TensorKind::kParameter || !t.data) continue;
    std::vector<float> v(t.data->size() / sizeof(float));
    std::memcpy(v.data(), t.data->data(), t.data->size());
    w[t.name] = std::move(v);
  }
  return w;
}

}  // namespace

TEST_CASE("gguf export: our quantizers write the bytes gguf-py writes", "[frontend][gguf][export]") {
  const std::vector<uint8_t> file = read_file_bytes(kDir + "quantize_expected.bin");
  uint64_t count = 0;
  std::memcpy(&count, file.data(), 8);
  std::vector<float> values(count);
  std::memcpy(values.data(), file.data() + 8, count * 4);
  size_t at = 8 + count * 4;
  int types = 0;
  while (at < file.size()) {
    uint32_t type = 0;
    uint64_t n = 0;
    std::memcpy(&type, file.data() + at, 4);
    std::memcpy(&n, file.data() + at + 4, 8);
    at += 12;
    INFO(gguf::type_name(type));
    auto ours = gguf::from_f32(type, values.data(), count);
    REQUIRE(ours.is_ok());
    REQUIRE(ours->size() == n);
    CHECK(std::memcmp(ours->data(), file.data() + at, n) == 0);
    at += n;
    ++types;
  }
  CHECK(types == 5);
  CHECK_FALSE(gguf::from_f32(gguf::kQ4_K, values.data(), count).is_ok());
  CHECK_FALSE(gguf::from_f32(gguf::kQ8_0, values.data(), 31).is_ok());
}

TEST_CASE("gguf export: unchanged weights give the source file back byte for byte", "[frontend][gguf][export]") {
  const models::WeightMap weights = import_weights(kLlama);
  const std::string out = temp_path("same.gguf");
  GgufExportReport report;
  const Status s = export_gguf(kLlama, weights, out, {}, &report);
  INFO(s.message());
  REQUIRE(s.is_ok());
  CHECK(report.replaced.empty());
  CHECK(report.kept == 20);
  CHECK(read_file_bytes(out) == read_file_bytes(kLlama));

  GgufExportOptions all;
  all.convert_all = true;  // every tensor as f32: the importer sees the same values
  REQUIRE(export_gguf(kLlama, {}, out, all, &report).is_ok());
  CHECK(report.replaced.size() == 20);
  CHECK(import_weights(out) == weights);
  std::remove(out.c_str());
}

TEST_CASE("gguf export: changed weights come back through the importer; the rest is the source's", "[frontend][gguf][export]") {
  models::WeightMap weights = import_weights(kLlama);
  const models::WeightMap original = weights;
  // A q_proj (rows reordered for llama.cpp), a norm and an f16 projection change.
  std::mt19937 gen(5);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  for (const char* name : {"model.layers.1.self_attn.q_proj.weight", "model.layers.1.input_layernorm.weight",
                           "model.layers.0.self_attn.o_proj.weight"}) {
    for (float& v : weights[name]) v += noise(gen);
  }
  const std::string out = temp_path("changed.gguf");
  GgufExportReport report;
  REQUIRE(export_gguf(kLlama, weights, out, {}, &report).is_ok());
  CHECK(report.replaced.size() == 3);
  const models::WeightMap back = import_weights(out);
  REQUIRE(back.size() == weights.size());
  for (const auto& [name, values] : weights) {
    INFO(name);
    CHECK(back.at(name) == values);
  }
  // Untouched tensors keep their quantized bytes; the metadata is the source's.
  const std::vector<uint8_t> src_bytes = read_file_bytes(kLlama), out_bytes = read_file_bytes(out);
  auto src = gguf::File::parse(src_bytes.data(), src_bytes.size());
  auto exp = gguf::File::parse(out_bytes.data(), out_bytes.size());
  REQUIRE((src.is_ok() && exp.is_ok()));
  REQUIRE(exp->metadata_size() == src->metadata_size());
  CHECK(std::memcmp(exp->metadata_bytes(), src->metadata_bytes(), src->metadata_size()) == 0);
  for (const gguf::TensorInfo& t : src->tensors()) {
    const gguf::TensorInfo* e = exp->find_tensor(t.name);
    REQUIRE(e);
    const bool changed = t.name == "blk.1.attn_q.weight" || t.name == "blk.1.attn_norm.weight" || t.name == "blk.0.attn_output.weight";
    INFO(t.name);
    CHECK(e->type == (changed ? uint32_t{gguf::kF32} : t.type));
    if (!changed) CHECK(std::memcmp(exp->tensor_data(*e), src->tensor_data(t), t.nbytes) == 0);
  }
  std::remove(out.c_str());
}

TEST_CASE("gguf export: a changed weight re-quantized to Q8_0 is within half a step", "[frontend][gguf][export]") {
  models::WeightMap weights = import_weights(kLlama);
  const std::string name = "model.layers.0.mlp.down_proj.weight";  // F32 in the source
  for (float& v : weights[name]) v *= 1.5f;
  const std::string out = temp_path("q8.gguf");
  GgufExportOptions options;
  options.changed_type = "q8_0";
  REQUIRE(export_gguf(kLlama, weights, out, options).is_ok());
  const std::vector<float>& want = weights[name];
  const std::vector<float> got = import_weights(out).at(name);
  REQUIRE(got.size() == want.size());
  int outside = 0;
  for (size_t b = 0; b < want.size(); b += 32) {
    float amax = 0.0f;
    for (size_t j = b; j < b + 32; ++j) amax = std::max(amax, std::fabs(want[j]));
    // Half a step of amax / 127, plus the f16 rounding of the scale (2^-11 relative) at amax.
    const float bound = amax / 127.0f * 0.5f + amax * 1.0e-3f;
    for (size_t j = b; j < b + 32; ++j) outside += std::fabs(got[j] - want[j]) > bound;
  }
  CHECK(outside == 0);
  std::remove(out.c_str());
}

TEST_CASE("gguf export: LoRA pairs merge as W + alpha/r B A, or go to llama.cpp's adapter file", "[frontend][gguf][export]") {
  const models::WeightMap base = import_weights(kLlama);
  const std::string module = "model.layers.1.self_attn.k_proj";  // Q4_1, rows reordered: 32 x 64
  const int64_t rank = 4, in = 64, out_rows = 32;
  std::mt19937 gen(9);
  std::normal_distribution<float> nd(0.0f, 0.1f);
  models::WeightMap adapters;
  auto& a = adapters[module + ".lora_A.weight"];
  auto& b = adapters[module + ".lora_B.weight"];
  for (int64_t i = 0; i < rank * in; ++i) a.push_back(nd(gen));
  for (int64_t i = 0; i < out_rows * rank; ++i) b.push_back(nd(gen));
  const double alpha = 8.0;

  SECTION("merged") {
    const std::string out = temp_path("merged.gguf");
    GgufExportOptions options;
    CHECK_THAT(export_gguf(kLlama, adapters, out, options).message(), Catch::Contains("lora_alpha"));
    options.lora_alpha = alpha;
    GgufExportReport report;
    REQUIRE(export_gguf(kLlama, adapters, out, options, &report).is_ok());
    CHECK(report.replaced == std::vector<std::string>{"blk.1.attn_k.weight"});
    const std::vector<float> got = import_weights(out).at(module + ".weight");
    const std::vector<float>& w = base.at(module + ".weight");
    double worst = 0.0;
    for (int64_t o = 0; o < out_rows; ++o) {
      for (int64_t i = 0; i < in; ++i) {
        double ba = 0.0;
        for (int64_t r = 0; r < rank; ++r) ba += double(b[o * rank + r]) * double(a[r * in + i]);
        worst = std::max(worst, std::fabs(double(got[o * in + i]) - (double(w[o * in + i]) + alpha / rank * ba)));
      }
    }
    CHECK(worst < 1e-6);
    std::remove(out.c_str());
  }
  SECTION("adapter file") {
    const std::string out = temp_path("adapter.gguf");
    REQUIRE(export_gguf_lora_adapter(kLlama, adapters, alpha, out).is_ok());
    const std::vector<uint8_t> bytes = read_file_bytes(out);
    auto f = gguf::File::parse(bytes.data(), bytes.size());
    REQUIRE(f.is_ok());
    CHECK(f->get_string("general.type").value() == "adapter");
    CHECK(f->get_string("adapter.type").value() == "lora");
    CHECK(f->get_float("adapter.lora.alpha").value() == alpha);
    REQUIRE(f->tensors().size() == 2);
    const gguf::TensorInfo* ta = f->find_tensor("blk.1.attn_k.weight.lora_a");
    const gguf::TensorInfo* tb = f->find_tensor("blk.1.attn_k.weight.lora_b");
    REQUIRE((ta && tb));
    CHECK(ta->dims == std::vector<uint64_t>{uint64_t(in), uint64_t(rank)});
    CHECK(tb->dims == std::vector<uint64_t>{uint64_t(rank), uint64_t(out_rows)});
    CHECK(std::memcmp(f->tensor_data(*ta), a.data(), a.size() * 4) == 0);
    // B's rows follow the base tensor's GGUF row order: per 16-row head, transformers' row
    // i (first half) and i + 8 (second half) sit at GGUF rows 2i and 2i + 1.
    std::vector<float> gb(b.size());
    std::memcpy(gb.data(), f->tensor_data(*tb), gb.size() * 4);
    for (int64_t head = 0; head < 2; ++head) {
      for (int64_t i = 0; i < 8; ++i) {
        for (int64_t half = 0; half < 2; ++half) {
          const int64_t hf_row = head * 16 + half * 8 + i, gguf_row = head * 16 + 2 * i + half;
          CHECK(std::equal(gb.begin() + gguf_row * rank, gb.begin() + (gguf_row + 1) * rank, b.begin() + hf_row * rank));
        }
      }
    }
    std::remove(out.c_str());
  }
}

TEST_CASE("gguf export: weights the source does not have are errors naming them", "[frontend][gguf][export]") {
  const std::string out = temp_path("bad.gguf");
  models::WeightMap unknown{{"model.layers.7.mlp.up_proj.weight", std::vector<float>(8192, 0.0f)}};
  CHECK_THAT(export_gguf(kLlama, unknown, out).message(), Catch::Contains("model.layers.7.mlp.up_proj.weight"));
  models::WeightMap short_one{{"model.norm.weight", std::vector<float>(3, 1.0f)}};
  CHECK_THAT(export_gguf(kLlama, short_one, out).message(), Catch::Contains("model.norm.weight"));
  GgufExportOptions k_quant;
  k_quant.changed_type = "q4_k";
  CHECK_THAT(export_gguf(kLlama, {}, out, k_quant).message(), Catch::Contains("q4_k"));
  models::WeightMap half_pair{{"model.layers.0.self_attn.q_proj.lora_A.weight", std::vector<float>(4 * 64, 0.0f)}};
  CHECK_THAT(export_gguf_lora_adapter(kLlama, half_pair, 8.0, out).message(), Catch::Contains("only one of"));
  std::ifstream absent(out);
  CHECK_FALSE(absent.good());  // nothing written on error
}
