// Test support: an op's shape inference called directly on tensor types, for the schema tests
// (what shapes an op produces, which inputs it rejects) that need no kernel.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ir/op_schema.hpp"

namespace pock::test {

// The output types `op` infers for `inputs`; errors name the node "the_node".
inline Result<std::vector<TensorType>> infer(const std::string& op, const std::vector<TensorType>& inputs,
                                             const Attrs& attrs) {
  std::vector<const TensorType*> ptrs;
  for (const TensorType& t : inputs) ptrs.push_back(&t);
  std::vector<TensorType> outs;
  POCK_RETURN_IF_ERROR(infer_types(op, "the_node", ptrs, attrs, &outs));
  return outs;
}

inline TensorType f32(Shape shape) { return TensorType{DType::kF32, std::move(shape)}; }

}  // namespace pock::test
