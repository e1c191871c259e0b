// Kernels whose run may find bad input on the device (an index out of range, a label outside the
// classes) and cannot return a status there: the op's state carries its parsed parameters and an
// error site (device_error.hpp) registered at prepare with ref's message, less the value and
// position the device does not report back; the functors report to it (error_site.hpp).
#pragma once
#include <memory>
#include <new>
#include <string>

#include "kernels/cuda/device_error.hpp"
#include "kernels/cuda/error_site.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

template <typename Params>
struct Checked {
  Params params;
  int32_t site = 0;
  // Where this run's functors report: the current instance's word (run time), this op's id.
  ErrorSite error() const { return ErrorSite{device_error_word(), site}; }
};

// The message of a bad input, for the parsed op ("an index is out of range [-5, 5) for axis 0").
template <typename Params>
using ErrorMessageFn = std::string (*)(const pock_op_desc& op, const Params& p);

// Parses `op` and registers its site; the message names the op as ref's KernelCall::error does.
template <typename Params>
Status prepare_checked(const pock_op_desc& op, ErrorMessageFn<Params> message, std::unique_ptr<Checked<Params>>* out) {
  std::unique_ptr<Checked<Params>> s(new (std::nothrow) Checked<Params>);
  const std::string name = std::string(op.op) + " '" + op.name + "'";
  if (!s) return Status(Code::kOutOfMemory, name + ": parameters");
  POCK_RETURN_IF_ERROR(parse(op, &s->params));
  s->site = add_error_site(name + ": " + message(op, s->params));
  *out = std::move(s);
  return Status::ok();
}

// typed_kernel (runtime/kernel.hpp) for such ops: run receives the parameters and the site.
template <typename Params, ErrorMessageFn<Params> Message, Status (*Run)(const KernelCall&, const Params&, ErrorSite)>
KernelDef checked_kernel(const char* op, DType dtype, int32_t score = 1,
                         bool (*accepts)(const pock_op_desc&) = nullptr) {
  KernelDef d;
  d.op = op;
  d.dtype = dtype;
  d.score = score;
  d.accepts = accepts;
  d.prepare = [](const pock_op_desc& desc, void** state) -> Status {
    std::unique_ptr<Checked<Params>> s;
    POCK_RETURN_IF_ERROR(prepare_checked(desc, Message, &s));
    *state = s.release();
    return Status::ok();
  };
  d.release = [](void* state) { delete static_cast<Checked<Params>*>(state); };
  d.run = [](const KernelCall& c) {
    const auto& s = *static_cast<const Checked<Params>*>(c.state);
    return Run(c, s.params, s.error());
  };
  return d;
}

}  // namespace pock::cuda
