// Small helpers shared by the cpu backend's kernels.
#pragma once
#include <cstdint>

#include "runtime/kernel.hpp"

namespace pock::cpu {

// Score of every cpu kernel: above ref's 1, so the engine binds cpu wherever it has a kernel.
constexpr int32_t kCpuScore = 10;

inline bool is_f32(const pock_tensor_desc& t) { return t.dtype == POCK_F32; }
inline bool is_present(const pock_tensor_desc& t) { return t.data != nullptr || t.rank >= 0; }

// True when `t` cannot change while the engine is open (a frozen weight or a constant), so its
// contents may be read and repacked once at prepare.
inline bool is_constant(const pock_tensor_desc& t) { return (t.flags & POCK_TENSOR_CONSTANT) != 0; }

// Product of dims [begin, end).
inline int64_t dims_product(const pock_tensor_desc& t, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= t.dims[i];
  return n;
}

// An f32 cpu kernel with a shape/attribute check, the form most of the backend's kernels take.
inline KernelDef f32_kernel(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore};
  d.accepts = accepts;
  return d;
}

// Makes `desc` usable as a KernelCall outside the engine (prepare functions read attributes too).
inline KernelCall call_of(const pock_op_desc& desc) { return KernelCall{&desc, nullptr}; }

}  // namespace pock::cpu
