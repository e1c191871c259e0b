// export_gguf / export_gguf_lora_adapter: a fine-tuned llama model back into llama.cpp's format.
// The source file supplies everything the training did not change (metadata, tokenizer, frozen
// tensors in their quantized bytes); only what differs is written anew.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "frontend/gguf/ggml_quantize.hpp"
#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"
#include "frontend/gguf/gguf_writer.hpp"
#include "frontend/gguf/llama_from_gguf.hpp"
#include "frontend/gguf/llama_names.hpp"
#include "pock/compiler/gguf.hpp"
#include "runtime/mapped_file.hpp"

namespace pock {
namespace {

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "GGUF export: " + what); }

Result<uint32_t> type_by_name(const std::string& name) {
  static const std::map<std::string, uint32_t> kTypes = {{"f32", gguf::kF32},   {"f16", gguf::kF16},   {"bf16", gguf::kBF16},
                                                         {"q8_0", gguf::kQ8_0}, {"q4_0", gguf::kQ4_0}, {"q4_1", gguf::kQ4_1}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return bad("type '" + name + "' is not one of f32, f16, bf16, q8_0, q4_0, q4_1");
  return it->second;
}

// A source file, mapped, parsed, with the llama configuration its metadata describes.
struct Source {
  MappedFile mapped;
  gguf::File file;
  models::LlamaConfig config;
};

Status open_source(const std::string& path, Source* s) {
  POCK_RETURN_IF_ERROR(s->mapped.open(path));
  POCK_ASSIGN_OR_RETURN(s->file, gguf::File::parse(s->mapped.data(), s->mapped.size()));
  POCK_ASSIGN_OR_RETURN(s->config, llama_config(s->file, GgufImportOptions{}));
  return Status::ok();
}

constexpr const char* kLoraA = ".lora_A.weight";
constexpr const char* kLoraB = ".lora_B.weight";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The module name of an adapter weight ("m.q_proj" for "m.q_proj.lora_A.weight"), or "".
std::string adapter_module(const std::string& name) {
  for (const char* tail : {kLoraA, kLoraB}) {
    if (ends_with(name, tail)) return name.substr(0, name.size() - std::string(tail).size());
  }
  return "";
}

// A = [rank, in], B = [out, rank] of one module, checked against the module weight's size.
struct AdapterPair {
  const std::vector<float>* a = nullptr;
  const std::vector<float>* b = nullptr;
  uint64_t rank = 0;
};

Result<AdapterPair> adapter_pair(const models::WeightMap& adapters, const std::string& module, uint64_t in, uint64_t out) {
  auto a = adapters.find(module + kLoraA);
  auto b = adapters.find(module + kLoraB);
  if (a == adapters.end() || b == adapters.end()) return bad("module '" + module + "' has only one of lora_A and lora_B");
  AdapterPair p{&a->second, &b->second, in > 0 ? a->second.size() / in : 0};
  if (p.rank == 0 || a->second.size() != p.rank * in) return bad("'" + a->first + "' is not [rank, " + std::to_string(in) + "]");
  if (b->second.size() != out * p.rank) {
    return bad("'" + b->first + "' is not [" + std::to_string(out) + ", " + std::to_string(p.rank) + "]");
  }
  return p;
}

// w [out, in] += scale * B [out, rank] A [rank, in], in double for each element.
void merge_adapter(const AdapterPair& p, float scale, uint64_t in, uint64_t out, std::vector<float>& w) {
  for (uint64_t o = 0; o < out; ++o) {
    for (uint64_t i = 0; i < in; ++i) {
      double sum = 0.0;
      for (uint64_t r = 0; r < p.rank; ++r) sum += double((*p.b)[o * p.rank + r]) * double((*p.a)[r * in + i]);
      w[o * in + i] += static_cast<float>(scale * sum);
    }
  }
}

// Bytes that `write_gguf` points into, kept alive until it has written them.
struct OwnedTensor {
  gguf::TensorToWrite tensor;
  std::vector<uint8_t> bytes;
};

Status write_owned(const std::string& out_path, const gguf::MetadataBuilder& metadata, std::vector<OwnedTensor>& tensors,
                   uint64_t alignment, GgufExportReport* report) {
  std::vector<gguf::TensorToWrite> list;
  for (OwnedTensor& t : tensors) {
    if (!t.bytes.empty()) t.tensor.data = t.bytes.data();
    list.push_back(t.tensor);
    if (report) report->file_bytes += t.tensor.nbytes;
  }
  return gguf::write_gguf(out_path, metadata, list, alignment);
}

}  // namespace

Status export_gguf(const std::string& source_path, const models::WeightMap& weights, const std::string& out_path,
                   const GgufExportOptions& options, GgufExportReport* report) {
  POCK_ASSIGN_OR_RETURN(const uint32_t changed_type, type_by_name(options.changed_type));
  Source s;
  POCK_RETURN_IF_ERROR(open_source(source_path, &s));
  if (report) *report = {};
  models::WeightMap adapters;
  for (const auto& [name, values] : weights) {
    if (adapter_module(name).empty()) continue;
    if (!(options.lora_alpha > 0.0)) return bad("'" + name + "' is a LoRA adapter weight: give lora_alpha to merge it");
    adapters[name] = values;
  }
  std::set<std::string> used;
  std::vector<OwnedTensor> tensors;
  for (const gguf::TensorInfo& t : s.file.tensors()) {
    POCK_ASSIGN_OR_RETURN(const gguf::LlamaTensorName name,
                          gguf::llama_tensor_name(t.name, s.config.num_heads, s.config.num_kv_heads));
    OwnedTensor out;
    out.tensor = {t.name, t.dims, t.type, s.file.tensor_data(t), t.nbytes};
    const std::string module = name.hf.substr(0, name.hf.size() - std::string(".weight").size());
    const bool adapted = adapters.count(module + kLoraA) || adapters.count(module + kLoraB);
    auto it = weights.find(name.hf);
    if (it != weights.end() || adapted || options.convert_all) {
      if (it != weights.end() && it->second.size() != t.elements) {
        return bad("weight '" + name.hf + "' has " + std::to_string(it->second.size()) + " values; '" + t.name + "' has " +
                   std::to_string(t.elements));
      }
      std::vector<float> source(t.elements);
      POCK_RETURN_IF_ERROR(gguf::to_f32(t.type, s.file.tensor_data(t), t.elements, source.data()));
      std::vector<float> values;
      if (it != weights.end()) {
        used.insert(name.hf);
        values = it->second;
      } else {
        values = source;
        if (name.heads > 0) values = gguf::reorder_head_rows(values, static_cast<int64_t>(t.dims[0]), name.heads, /*to_hf=*/true);
      }
      if (adapted) {
        if (t.dims.size() != 2) return bad("'" + t.name + "' is not a matrix: it cannot take a LoRA adapter");
        POCK_ASSIGN_OR_RETURN(const AdapterPair p, adapter_pair(adapters, module, t.dims[0], t.dims[1]));
        used.insert(module + kLoraA);
        used.insert(module + kLoraB);
        merge_adapter(p, static_cast<float>(options.lora_alpha / static_cast<double>(p.rank)), t.dims[0], t.dims[1], values);
      }
      if (name.heads > 0) values = gguf::reorder_head_rows(values, static_cast<int64_t>(t.dims[0]), name.heads, /*to_hf=*/false);
      if (options.convert_all || std::memcmp(source.data(), values.data(), values.size() * sizeof(float)) != 0) {
        POCK_ASSIGN_OR_RETURN(out.bytes, gguf::from_f32(changed_type, values.data(), t.elements));
        out.tensor.type = changed_type;
        out.tensor.nbytes = out.bytes.size();
        if (report) report->replaced.push_back(t.name);
      } else if (report) {
        ++report->kept;
      }
    } else if (report) {
      ++report->kept;
    }
    tensors.push_back(std::move(out));
  }
  for (const auto& [name, values] : weights) {
    if (!used.count(name)) return bad("weight '" + name + "' has no tensor in " + source_path);
  }
  gguf::MetadataBuilder metadata;
  metadata.add_encoded(s.file.metadata_bytes(), s.file.metadata_size(), s.file.metadata().size());
  return write_owned(out_path, metadata, tensors, s.file.alignment(), report);
}

Status export_gguf_lora_adapter(const std::string& source_path, const models::WeightMap& adapters, double alpha,
                                const std::string& out_path, GgufExportReport* report) {
  Source s;
  POCK_RETURN_IF_ERROR(open_source(source_path, &s));
  if (report) *report = {};
  gguf::MetadataBuilder metadata;
  metadata.add_string("general.architecture", "llama");
  metadata.add_string("general.type", "adapter");
  metadata.add_string("adapter.type", "lora");
  metadata.add_f32("adapter.lora.alpha", static_cast<float>(alpha));
  std::set<std::string> used;
  std::vector<OwnedTensor> tensors;
  for (const gguf::TensorInfo& t : s.file.tensors()) {
    POCK_ASSIGN_OR_RETURN(const gguf::LlamaTensorName name,
                          gguf::llama_tensor_name(t.name, s.config.num_heads, s.config.num_kv_heads));
    const std::string module = name.hf.substr(0, name.hf.size() - std::string(".weight").size());
    if (!adapters.count(module + kLoraA) && !adapters.count(module + kLoraB)) continue;
    if (t.dims.size() != 2) return bad("'" + t.name + "' is not a matrix: it cannot take a LoRA adapter");
    const uint64_t in = t.dims[0], rows = t.dims[1];
    POCK_ASSIGN_OR_RETURN(const AdapterPair p, adapter_pair(adapters, module, in, rows));
    used.insert(module + kLoraA);
    used.insert(module + kLoraB);
    const uint64_t rank = p.rank;
    std::vector<float> b_rows = *p.b;
    if (name.heads > 0) b_rows = gguf::reorder_head_rows(b_rows, static_cast<int64_t>(rank), name.heads, /*to_hf=*/false);
    // llama.cpp's shapes: lora_a [in, rank] and lora_b [rank, out] in ggml order, i.e. peft's
    // lora_A [rank, in] and lora_B [out, rank] row-major.
    auto add = [&](const char* suffix, std::vector<uint64_t> dims, const std::vector<float>& values) -> Status {
      OwnedTensor out;
      POCK_ASSIGN_OR_RETURN(out.bytes, gguf::from_f32(gguf::kF32, values.data(), values.size()));
      out.tensor = {t.name + suffix, std::move(dims), gguf::kF32, nullptr, out.bytes.size()};
      if (report) report->replaced.push_back(out.tensor.name);
      tensors.push_back(std::move(out));
      return Status::ok();
    };
    POCK_RETURN_IF_ERROR(add(".lora_a", {in, rank}, *p.a));
    POCK_RETURN_IF_ERROR(add(".lora_b", {rank, rows}, b_rows));
  }
  for (const auto& [name, values] : adapters) {
    if (!used.count(name)) return bad("adapter weight '" + name + "' matches no lora_A/lora_B pair of a tensor in " + source_path);
  }
  return write_owned(out_path, metadata, tensors, 32, report);
}

}  // namespace pock
