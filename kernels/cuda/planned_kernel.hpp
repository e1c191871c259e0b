// A cuda kernel whose state is its typed attributes (parsed by the shared kernels/params parser,
// as typed_kernel does) plus a launch plan worked out once from the bound op's shapes at prepare:
// broadcast strides, reduction split, gather steps. run() then only reads pointers and launches.
#pragma once
#include <new>
#include <string>

#include "runtime/kernel.hpp"

namespace pock::cuda {

// For ops without attributes.
struct NoParams {};
inline Status parse(const pock_op_desc&, NoParams*) { return Status::ok(); }

template <typename Params, typename Plan>
struct Planned {
  Params params;
  Plan plan;
};

template <typename Params, typename Plan, Status (*Make)(const pock_op_desc&, const Params&, Plan*),
          Status (*Run)(const KernelCall&, const Params&, const Plan&)>
KernelDef planned_kernel(const char* op, DType dtype, bool (*accepts)(const pock_op_desc&) = nullptr) {
  using State = Planned<Params, Plan>;
  KernelDef d;
  d.op = op;
  d.dtype = dtype;
  d.accepts = accepts;
  d.prepare = [](const pock_op_desc& desc, void** state) -> Status {
    auto* s = new (std::nothrow) State{};
    if (!s) return Status(Code::kOutOfMemory, std::string(desc.op) + " '" + desc.name + "': launch plan");
    if (Status status = parse(desc, &s->params); !status.is_ok()) {
      delete s;
      return status;
    }
    if (Status status = Make(desc, s->params, &s->plan); !status.is_ok()) {
      delete s;
      return status;
    }
    *state = s;
    return Status::ok();
  };
  d.release = [](void* state) { delete static_cast<State*>(state); };
  d.run = [](const KernelCall& c) {
    const auto& s = *static_cast<const State*>(c.state);
    return Run(c, s.params, s.plan);
  };
  return d;
}

}  // namespace pock::cuda
