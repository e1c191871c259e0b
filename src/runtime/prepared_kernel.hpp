// Kernels with prepared state, for every in-tree backend (see kernel.hpp for the plain forms).
#pragma once
#include <new>
#include <string>

#include "runtime/kernel.hpp"

namespace pock {

// A kernel whose state — parameters, tables, buffers — is made at prepare from the op's static
// shapes, so that a step allocates nothing. State is default-constructible and has either
// `Status prepare(const pock_op_desc&)` or, to size the backend's shared scratch,
// `Status prepare(const pock_op_desc&, KernelScope&)`; Run gets it mutable.
template <typename State, Status (*Run)(const KernelCall&, State&)>
KernelDef prepared_kernel(const char* op, DType dtype, int32_t score = 1, bool (*accepts)(const pock_op_desc&) = nullptr) {
  KernelDef d{op, dtype, nullptr, score};
  d.accepts = accepts;
  // Runs prepare(s) on a new State; allocation failures (new or a container's) become kOutOfMemory.
  static constexpr auto make = [](const pock_op_desc& desc, void** state, auto&& prepare) -> Status {
    const auto no_memory = [&] { return Status(Code::kOutOfMemory, std::string(desc.op) + " '" + desc.name + "': no memory for its state"); };
    State* s = new (std::nothrow) State{};
    if (!s) return no_memory();
    Status status = Status::ok();
    try {
      status = prepare(*s);
    } catch (const std::bad_alloc&) {
      status = no_memory();
    }
    if (!status.is_ok()) {
      delete s;
      return status;
    }
    *state = s;
    return Status::ok();
  };
  if constexpr (requires(State s, const pock_op_desc& desc, KernelScope& scope) { s.prepare(desc, scope); }) {
    d.prepare_scoped = [](const pock_op_desc& desc, KernelScope& scope, void** state) -> Status {
      return make(desc, state, [&](State& s) { return s.prepare(desc, scope); });
    };
  } else {
    d.prepare = [](const pock_op_desc& desc, void** state) -> Status {
      return make(desc, state, [&](State& s) { return s.prepare(desc); });
    };
  }
  d.release = [](void* state) { delete static_cast<State*>(state); };
  d.run = [](const KernelCall& c) { return Run(c, *static_cast<State*>(c.state)); };
  return d;
}

}  // namespace pock
