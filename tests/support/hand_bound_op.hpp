// Test support: the pieces of an op bound by hand (descriptors over host buffers, attributes, the
// op descriptor), for kernel tests that prepare ops on a KernelScope of their own.
#pragma once
#include <cstdint>

#include "pock/backend.h"
#include "pock/compiler/ir.hpp"

namespace pock::test {

inline pock_tensor_desc f32_desc(const Shape& shape, const float* data, uint32_t flags = 0) {
  pock_tensor_desc d{};
  d.dtype = POCK_F32;
  d.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) d.dims[i] = shape[i];
  d.data = const_cast<float*>(data);  // kernels never write their inputs
  d.nbytes = static_cast<size_t>(numel(shape)) * sizeof(float);
  d.flags = flags;
  return d;
}

inline pock_attr int_attr(const char* name, int64_t value) {
  pock_attr a{};
  a.name = name;
  a.kind = POCK_ATTR_INT;
  a.i = value;
  return a;
}

inline pock_attr string_attr(const char* name, const char* value) {
  pock_attr a{};
  a.name = name;
  a.kind = POCK_ATTR_STRING;
  a.s = value;
  return a;
}

// One output; `op` names the node too. The arrays must outlive the descriptor.
inline pock_op_desc op_desc(const char* op, const pock_tensor_desc* inputs, int32_t num_inputs,
                            const pock_tensor_desc* output, const pock_attr* attrs, int32_t num_attrs,
                            int32_t num_threads = 1) {
  pock_op_desc d{};
  d.op = op;
  d.name = op;
  d.num_inputs = num_inputs;
  d.num_outputs = 1;
  d.inputs = inputs;
  d.outputs = output;
  d.num_attrs = num_attrs;
  d.attrs = attrs;
  d.num_threads = num_threads;
  return d;
}

}  // namespace pock::test
