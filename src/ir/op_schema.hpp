// Op schemas: arity, attribute checks and shape inference for every op. Shared by the compiler
// (building and rewriting graphs) and the runtime (verifying a blob before running it).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pock/types.hpp"

namespace pock {

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
};

// What shape inference sees: input types (nullptr for an omitted optional input) and attributes.
struct InferContext {
  std::string_view op;
  std::string_view node;          // node name, for messages
  std::vector<const TensorType*> inputs;
  const Attrs* attrs = nullptr;
  std::vector<TensorType> outputs;  // filled by the schema

  const TensorType& in(size_t i) const { return *inputs[i]; }
  bool has_in(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // Error helpers name the op and node so every message says where it happened.
  Status error(const std::string& what) const;
  Status shape_error(const std::string& what) const;
};

using InferFn = Status (*)(InferContext& ctx);

struct OpSchema {
  std::string name;
  int min_inputs = 0, max_inputs = 0;
  // Variadic ops (Concat, GlobalNormClipScale) take any number of inputs, each of them required;
  // other ops may omit (nullptr) an optional input at or past min_inputs.
  bool variadic = false;
  int min_outputs = 1, max_outputs = 1;
  InferFn infer = nullptr;
  // Inputs the op writes in place (optimizer updates, BatchNorm running stats): the scheduler
  // orders every other reader of these before the op.
  std::vector<int> mutated_inputs;
  // Output 0 may reuse this input's buffer when that input dies at this op and has the same size
  // (elementwise ops whose kernel reads element i before writing element i). -1: never.
  int inplace_input = -1;
  // Output 0 is input 0's bytes unchanged under another shape (Reshape, Flatten, Squeeze,
  // Unsqueeze): the planner gives both one buffer for as long as either lives, so no copy runs.
  bool is_view = false;
  std::string doc;
};

class SchemaRegistry {
 public:
  static const SchemaRegistry& global();
  void add(OpSchema schema);
  const OpSchema* find(std::string_view op) const;
  std::vector<std::string> names() const;
  void set_variadic(const std::string& op) {
    auto it = schemas_.find(op);
    if (it != schemas_.end()) it->second.variadic = true;
  }
  void set_inplace(const std::string& op, int input) {
    auto it = schemas_.find(op);
    if (it != schemas_.end()) it->second.inplace_input = input;
  }
  void set_view(const std::string& op) {
    auto it = schemas_.find(op);
    if (it != schemas_.end()) it->second.is_view = true;
  }

 private:
  std::unordered_map<std::string, OpSchema> schemas_;
};

// Checks arity against the schema and runs its inference. Unknown op -> kUnsupportedOp.
Status infer_types(std::string_view op, std::string_view node, const std::vector<const TensorType*>& inputs,
                   const Attrs& attrs, std::vector<TensorType>* outputs);

// Broadcast two shapes with numpy rules; error names both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Normalizes a possibly negative axis for a given rank; error when out of range.
Result<int> normalize_axis(int64_t axis, int rank);

// One registration function per op family, listed once in op_families.def.
#define POCK_OP_FAMILY(family) void register_##family##_schemas(SchemaRegistry& registry);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY

}  // namespace pock
