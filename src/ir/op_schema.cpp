#include "ir/op_schema.hpp"

#include <algorithm>

namespace pock {

Status InferContext::error(const std::string& what) const {
  return Status(Code::kInvalidArgument, std::string(op) + " '" + std::string(node) + "': " + what);
}

Status InferContext::shape_error(const std::string& what) const {
  return Status(Code::kShapeMismatch, std::string(op) + " '" + std::string(node) + "': " + what);
}

const SchemaRegistry& SchemaRegistry::global() {
  static const SchemaRegistry registry = [] {
    SchemaRegistry r;
#define POCK_OP_FAMILY(family) register_##family##_schemas(r);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY
    return r;
  }();
  return registry;
}

void SchemaRegistry::add(OpSchema schema) {
  std::string name = schema.name;
  schemas_[name] = std::move(schema);
}

const OpSchema* SchemaRegistry::find(std::string_view op) const {
  auto it = schemas_.find(std::string(op));
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> SchemaRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& kv : schemas_) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

Status infer_types(std::string_view op, std::string_view node, const std::vector<const TensorType*>& inputs,
                   const Attrs& attrs, std::vector<TensorType>* outputs) {
  const OpSchema* schema = SchemaRegistry::global().find(op);
  if (!schema) {
    return Status(Code::kUnsupportedOp, "unknown op '" + std::string(op) + "' at node '" + std::string(node) + "'");
  }
  const int n = static_cast<int>(inputs.size());
  if (n < schema->min_inputs || n > schema->max_inputs) {
    return Status(Code::kInvalidArgument, std::string(op) + " '" + std::string(node) + "': takes " +
                                              std::to_string(schema->min_inputs) + ".." +
                                              std::to_string(schema->max_inputs) + " inputs, got " +
                                              std::to_string(n));
  }
  const int required = schema->variadic ? n : std::min(n, schema->min_inputs);
  for (int i = 0; i < required; ++i) {
    if (!inputs[i]) {
      return Status(Code::kInvalidArgument, std::string(op) + " '" + std::string(node) + "': required input " +
                                                std::to_string(i) + " is missing");
    }
  }
  for (const TensorType* t : inputs) {
    if (t && static_cast<int>(t->shape.size()) > kMaxRank) {
      return Status(Code::kShapeMismatch, std::string(op) + " '" + std::string(node) + "': rank " +
                                              std::to_string(t->shape.size()) + " exceeds the maximum " +
                                              std::to_string(kMaxRank));
    }
    if (t) {
      for (int64_t d : t->shape) {
        if (d < 0) {
          return Status(Code::kShapeMismatch, std::string(op) + " '" + std::string(node) +
                                                  "': negative dimension in " + shape_str(t->shape));
        }
      }
    }
  }
  InferContext ctx;
  ctx.op = op;
  ctx.node = node;
  ctx.inputs = inputs;
  ctx.attrs = &attrs;
  POCK_RETURN_IF_ERROR(schema->infer(ctx));
  const int nout = static_cast<int>(ctx.outputs.size());
  if (nout < schema->min_outputs || nout > schema->max_outputs) {
    return Status(Code::kInternal, std::string(op) + ": inference produced " + std::to_string(nout) + " outputs");
  }
  *outputs = std::move(ctx.outputs);
  return Status::ok();
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return Status(Code::kShapeMismatch, "cannot broadcast " + shape_str(a) + " with " + shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Result<int> normalize_axis(int64_t axis, int rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max(rank, 1)) {
    return Status(Code::kInvalidArgument, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return static_cast<int>(a);
}

}  // namespace pock
