// The small types the runtime and the compiler share: dtypes, static shapes, typed attributes and
// what a tensor is for. The compiler's graph IR (tensors, nodes) builds on them: pock/compiler/ir.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pock/status.hpp"

namespace pock {

// Append only: the numeric codes are stored in blobs and cross the C API (pock_dtype).
// f64 and the wider unsigned / 16-bit integers are storage and inference dtypes: nothing trains in them.
enum class DType : uint8_t { kF32 = 0, kF16, kBF16, kI32, kI64, kI8, kU8, kBool, kF64, kI16, kU16, kU32, kU64 };
constexpr int kNumDTypes = 13;
size_t dtype_size(DType dt);
const char* dtype_name(DType dt);
Result<DType> dtype_from_name(std::string_view name);
bool is_float(DType dt);
// The float dtypes gradients flow in (f32, f16, bf16): f64 is carried and computed, never trained.
bool is_trainable_float(DType dt);

constexpr int kMaxRank = 8;
using Shape = std::vector<int64_t>;
int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);

// Attribute values: the few types ops need. Lists are int64 / float.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

// Sorted small map: lookups by string_view never allocate (kernels read attributes in a step).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init);
  void set(std::string name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;
  int64_t get_int(std::string_view name, int64_t fallback) const;
  double get_float(std::string_view name, double fallback) const;
  std::string_view get_string(std::string_view name, std::string_view fallback) const;
  // Returns the list, or `fallback` when absent or not a list (callers that accept a scalar check find()).
  const std::vector<int64_t>& get_ints(std::string_view name, const std::vector<int64_t>& fallback) const;
  const std::vector<double>& get_floats(std::string_view name, const std::vector<double>& fallback) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool operator==(const Attrs& other) const { return items_ == other.items_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name
};

// What a tensor is for; decides where it lives (blob weights, persistent region, arena).
enum class TensorKind : uint8_t {
  kInput = 0,      // fed by the caller each step (images, tokens, labels)
  kParameter,      // a model weight; trainable or frozen per the recipe
  kState,          // mutable non-parameter state: optimizer moments, BN running stats, step counter
  kConstant,       // a folded constant
  kActivation,     // an intermediate: planned into the arena
  kOutput,         // an intermediate that the caller reads after a function runs
};
const char* tensor_kind_name(TensorKind kind);

}  // namespace pock
