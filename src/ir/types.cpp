// dtypes, shapes and attributes.
#include <algorithm>
#include <limits>

#include "pock/types.hpp"

namespace pock {

size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::kF32: case DType::kI32: case DType::kU32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: case DType::kU16: return 2;
    case DType::kI64: case DType::kF64: case DType::kU64: return 8;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
  }
  return 0;
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kBool: return "bool";
    case DType::kF64: return "f64";
    case DType::kI16: return "i16";
    case DType::kU16: return "u16";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
  }
  return "?";
}

Result<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  }
  return Status(Code::kInvalidArgument, "unknown dtype '" + std::string(name) + "'");
}

bool is_float(DType dt) { return is_trainable_float(dt) || dt == DType::kF64; }

bool is_trainable_float(DType dt) { return dt == DType::kF32 || dt == DType::kF16 || dt == DType::kBF16; }

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

const char* tensor_kind_name(TensorKind kind) {
  switch (kind) {
    case TensorKind::kInput: return "input";
    case TensorKind::kParameter: return "parameter";
    case TensorKind::kState: return "state";
    case TensorKind::kConstant: return "constant";
    case TensorKind::kActivation: return "activation";
    case TensorKind::kOutput: return "output";
  }
  return "?";
}

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) {
  for (const auto& kv : init) set(kv.first, kv.second);
}

void Attrs::set(std::string name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& key) { return item.first < key; });
  if (it != items_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    items_.insert(it, {std::move(name), std::move(value)});
  }
}

const AttrValue* Attrs::find(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, std::string_view key) { return std::string_view(item.first) < key; });
  if (it != items_.end() && it->first == name) return &it->second;
  return nullptr;
}

namespace {

// A float attribute read as an integer, truncated; one beyond int64's range (or NaN, which a
// hostile blob can hold where an int belongs) converting directly is undefined behaviour, so it
// saturates instead, to a value every range check downstream refuses (NaN: the lowest).
int64_t saturating_int(double f) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63: the first double above int64's range
  if (!(f >= -kTwo63)) return std::numeric_limits<int64_t>::min();
  if (f >= kTwo63) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(f);
}

}  // namespace

int64_t Attrs::get_int(std::string_view name, int64_t fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (auto* i = std::get_if<int64_t>(v)) return *i;
  if (auto* f = std::get_if<double>(v)) return saturating_int(*f);
  return fallback;
}

double Attrs::get_float(std::string_view name, double fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (auto* f = std::get_if<double>(v)) return *f;
  if (auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return fallback;
}

std::string_view Attrs::get_string(std::string_view name, std::string_view fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (auto* s = std::get_if<std::string>(v)) return *s;
  return fallback;
}

const std::vector<int64_t>& Attrs::get_ints(std::string_view name, const std::vector<int64_t>& fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  return fallback;
}

const std::vector<double>& Attrs::get_floats(std::string_view name, const std::vector<double>& fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (auto* l = std::get_if<std::vector<double>>(v)) return *l;
  return fallback;
}

}  // namespace pock
