// What an in-tree kernel sees: the bound op (backend ABI descriptor) with typed accessors for its
// tensors. Attributes are not among them: an op's attributes are parsed once, at prepare, by the
// parser of its family that every backend shares (kernels/params), and reach run() typed
// (typed_kernel below).
// In-tree backends are tables of KernelDef exposed through the same pock_backend_v1 ABI that
// out-of-tree plugins implement (see table_backend.hpp).
#pragma once
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pock/backend.h"
#include "pock/types.hpp"

namespace pock {

class KernelScope;  // runtime/kernel_scope.hpp

inline int64_t numel(const pock_tensor_desc& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

inline Shape shape_of(const pock_tensor_desc& t) { return Shape(t.dims, t.dims + (t.rank > 0 ? t.rank : 0)); }

// A read-only list of int64 attribute values.
struct IntSpan {
  const int64_t* data = nullptr;
  int64_t size = 0;
  int64_t operator[](int64_t i) const { return data[i]; }
  bool empty() const { return size == 0; }
  const int64_t* begin() const { return data; }
  const int64_t* end() const { return data + size; }
};

inline IntSpan span_of(const std::vector<int64_t>& list) { return {list.data(), static_cast<int64_t>(list.size())}; }

struct KernelCall {
  const pock_op_desc* desc = nullptr;
  void* state = nullptr;  // what the kernel's prepare() returned

  int num_inputs() const { return desc->num_inputs; }
  int num_outputs() const { return desc->num_outputs; }
  bool has_input(int i) const { return i < desc->num_inputs && desc->inputs[i].data != nullptr; }
  const pock_tensor_desc& in(int i) const { return desc->inputs[i]; }
  const pock_tensor_desc& out(int i) const { return desc->outputs[i]; }
  template <typename T> const T* in_data(int i) const { return static_cast<const T*>(desc->inputs[i].data); }
  template <typename T> T* out_data(int i) const { return static_cast<T*>(desc->outputs[i].data); }
  // Inputs an op mutates in place (optimizer state, running statistics).
  template <typename T> T* inout_data(int i) const { return static_cast<T*>(desc->inputs[i].data); }

  Status error(const std::string& what) const {
    return Status(Code::kInvalidArgument, std::string(desc->op) + " '" + desc->name + "': " + what);
  }
};

using KernelFn = Status (*)(const KernelCall& call);
// Optional per-op setup at load (parse attributes, create library operator objects).
using KernelPrepareFn = Status (*)(const pock_op_desc& op, void** state);
using KernelReleaseFn = void (*)(void* state);
// The same, for kernels that share scratch or packed constants with the other ops of their
// backend instance (kernel_scope.hpp). `scope` outlives every op prepared with it.
using KernelScopedPrepareFn = Status (*)(const pock_op_desc& op, KernelScope& scope, void** state);

struct KernelDef {
  const char* op = nullptr;
  DType dtype = DType::kF32;  // dtype of the op's first input (first output when it has none)
  KernelFn run = nullptr;
  int32_t score = 1;          // higher wins when several backends support the op
  KernelPrepareFn prepare = nullptr;
  KernelReleaseFn release = nullptr;
  // Optional finer check (shapes, attributes); when it returns false the op falls to another backend.
  bool (*accepts)(const pock_op_desc& op) = nullptr;
  // Used instead of `prepare` when set.
  KernelScopedPrepareFn prepare_scoped = nullptr;
};

// A kernel whose attributes are parsed once, at prepare, by the op's parser that every backend
// shares (kernels/params/<family>.hpp: `Status parse(const pock_op_desc&, Params*)`, found by
// argument-dependent lookup); run receives them typed and never looks an attribute up.
template <typename Params, Status (*Run)(const KernelCall&, const Params&)>
KernelDef typed_kernel(const char* op, DType dtype, int32_t score = 1, bool (*accepts)(const pock_op_desc&) = nullptr) {
  KernelDef d;
  d.op = op;
  d.dtype = dtype;
  d.score = score;
  d.accepts = accepts;
  d.prepare = [](const pock_op_desc& desc, void** state) -> Status {
    auto* p = new (std::nothrow) Params{};
    if (!p) return Status(Code::kOutOfMemory, std::string(desc.op) + " '" + desc.name + "': parameters");
    if (Status s = parse(desc, p); !s.is_ok()) {
      delete p;
      return s;
    }
    *state = p;
    return Status::ok();
  };
  d.release = [](void* state) { delete static_cast<Params*>(state); };
  d.run = [](const KernelCall& c) { return Run(c, *static_cast<const Params*>(c.state)); };
  return d;
}

// The kernels of one in-tree backend, keyed by (op, dtype).
class KernelTable {
 public:
  void add(const KernelDef& def);
  const KernelDef* find(std::string_view op, DType dtype) const;
  std::vector<const KernelDef*> all() const;

 private:
  std::unordered_map<std::string, std::vector<KernelDef>> by_op_;
};

// The dtype a kernel is keyed on for a bound op.
DType kernel_key_dtype(const pock_op_desc& op);

}  // namespace pock
