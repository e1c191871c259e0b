#include "frontend/safetensors/safetensors_file.hpp"

#include <algorithm>
#include <cstring>

#include "frontend/safetensors/untrusted_json.hpp"
#include "ir/float16.hpp"

namespace pock::safetensors {
namespace {

using Json = nlohmann::json;

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "safetensors: " + what); }

// a * b, false on overflow.
bool multiply(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  *out = a * b;
  return true;
}

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// One header entry: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}.
Status parse_entry(const std::string& name, const Json& entry, uint64_t data_size, TensorInfo* t) {
  t->name = name;
  if (!entry.is_object()) return bad("tensor '" + name + "' is not an object");
  const auto dtype = entry.find("dtype"), shape = entry.find("shape"), offsets = entry.find("data_offsets");
  if (dtype == entry.end() || !dtype->is_string()) return bad("tensor '" + name + "' has no dtype string");
  t->dtype = dtype->get_ref<const std::string&>();
  const uint64_t element_size = dtype_size(t->dtype);
  if (element_size == 0) return bad("tensor '" + name + "' has the unknown dtype '" + t->dtype + "'");
  if (shape == entry.end() || !shape->is_array()) return bad("tensor '" + name + "' has no shape array");
  t->elements = 1;
  for (const Json& d : *shape) {
    if (!d.is_number_unsigned()) return bad("tensor '" + name + "' has a shape entry that is not a non-negative integer");
    t->shape.push_back(d.get<uint64_t>());
    if (!multiply(t->elements, t->shape.back(), &t->elements)) return bad("tensor '" + name + "': the shape's product overflows");
  }
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return bad("tensor '" + name + "' has no data_offsets [begin, end] of non-negative integers");
  }
  t->begin = (*offsets)[0].get<uint64_t>();
  t->end = (*offsets)[1].get<uint64_t>();
  if (t->begin > t->end || t->end > data_size) {
    return bad("tensor '" + name + "': data_offsets [" + std::to_string(t->begin) + ", " + std::to_string(t->end) +
               "] are not within the " + std::to_string(data_size) + " data bytes");
  }
  uint64_t bytes = 0;
  if (!multiply(t->elements, element_size, &bytes) || bytes != t->end - t->begin) {
    return bad("tensor '" + name + "': " + std::to_string(t->end - t->begin) + " data bytes do not hold its shape of " +
               t->dtype);
  }
  return Status::ok();
}

Status parse_metadata(const Json& m, std::map<std::string, std::string>* out) {
  if (!m.is_object()) return bad("__metadata__ is not an object");
  for (const auto& [key, value] : m.items()) {
    if (!value.is_string()) return bad("__metadata__ '" + key + "' is not a string");
    (*out)[key] = value.get<std::string>();
  }
  return Status::ok();
}

// The ranges must tile the data section: sorted by offset, each begins where the previous ended.
Status check_tiling(const std::vector<TensorInfo>& sorted, uint64_t data_size) {
  uint64_t at = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& t : sorted) {
    if (t.begin < at) return bad("tensors '" + previous->name + "' and '" + t.name + "' overlap");
    if (t.begin > at) return bad("data bytes [" + std::to_string(at) + ", " + std::to_string(t.begin) + ") belong to no tensor");
    at = t.end;
    previous = &t;
  }
  if (at != data_size) return bad(std::to_string(data_size - at) + " data bytes after the last tensor belong to no tensor");
  return Status::ok();
}

}  // namespace

uint64_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, uint64_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

Result<File> File::parse(const uint8_t* data, size_t size) {
  if (size < 8) return bad("the file is " + std::to_string(size) + " bytes, shorter than the header length");
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | data[i];
  if (header_size > size - 8) {
    return bad("the header length " + std::to_string(header_size) + " is larger than the file (" + std::to_string(size) + " bytes)");
  }
  if (header_size > kMaxHeaderBytes) return bad("the header length " + std::to_string(header_size) + " exceeds 16 MiB");
  POCK_ASSIGN_OR_RETURN(const Json header,
                        hf::parse_untrusted_json(reinterpret_cast<const char*>(data + 8), header_size, "safetensors header"));
  if (!header.is_object()) return bad("the header is not a JSON object");
  File f;
  f.data_ = data + 8 + header_size;
  const uint64_t data_size = size - 8 - header_size;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      POCK_RETURN_IF_ERROR(parse_metadata(entry, &f.metadata_));
      continue;
    }
    TensorInfo t;
    POCK_RETURN_IF_ERROR(parse_entry(name, entry, data_size, &t));
    f.tensors_.push_back(std::move(t));
  }
  std::sort(f.tensors_.begin(), f.tensors_.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  POCK_RETURN_IF_ERROR(check_tiling(f.tensors_, data_size));
  for (size_t i = 0; i < f.tensors_.size(); ++i) f.by_name_[f.tensors_[i].name] = i;  // names are unique: JSON keys
  return f;
}

const TensorInfo* File::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

Status to_f32(const File& file, const TensorInfo& t, std::vector<float>* values) {
  const uint8_t* p = file.tensor_data(t);
  values->resize(static_cast<size_t>(t.elements));
  float* y = values->data();
  if (t.dtype == "F32") {
    for (uint64_t i = 0; i < t.elements; ++i) {
      const uint32_t bits = uint32_t{load_u16(p + 4 * i)} | (uint32_t{load_u16(p + 4 * i + 2)} << 16);
      std::memcpy(y + i, &bits, 4);
    }
  } else if (t.dtype == "F16") {
    for (uint64_t i = 0; i < t.elements; ++i) y[i] = half_to_float(load_u16(p + 2 * i));
  } else if (t.dtype == "BF16") {
    for (uint64_t i = 0; i < t.elements; ++i) y[i] = bf16_to_float(load_u16(p + 2 * i));
  } else {
    values->clear();
    return Status(Code::kUnsupportedOp,
                  "safetensors: tensor '" + t.name + "' has dtype " + t.dtype + " (weights must be F32, F16 or BF16)");
  }
  return Status::ok();
}

}  // namespace pock::safetensors
