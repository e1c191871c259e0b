// The scratch rows the int8 reference kernels quantize into (kernels/int8_rows.h), sized at
// prepare from input 1's dims[1] — K of LinearInt8's w [N, K], N of LinearInt8InputGrad's
// w_t [K, N] — so that a step allocates nothing.
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "runtime/kernel.hpp"

namespace pock::ref {

struct Int8RowScratch {
  std::vector<int8_t> row;
  std::vector<float> floats;  // LinearInt8InputGrad: the row dy * scale before it is quantized
};

inline Status int8_row_prepare(const pock_op_desc& op, void** state) {
  auto s = std::unique_ptr<Int8RowScratch>(new (std::nothrow) Int8RowScratch{});
  if (!s) return Status(Code::kOutOfMemory, std::string(op.op) + ": no memory for its scratch row");
  s->row.resize(static_cast<size_t>(op.inputs[1].dims[1]));
  s->floats.resize(s->row.size());
  *state = s.release();
  return Status::ok();
}

inline void int8_row_release(void* state) { delete static_cast<Int8RowScratch*>(state); }

inline int8_t* int8_row(const KernelCall& c) { return static_cast<Int8RowScratch*>(c.state)->row.data(); }

// `def` with the scratch row's prepare and release.
inline KernelDef with_int8_row(KernelDef def) {
  def.prepare = int8_row_prepare;
  def.release = int8_row_release;
  return def;
}

}  // namespace pock::ref
