// A ProgramSpec op described the way backends see it (pock_op_desc), without an engine: the
// compiler asks each backend whether it supports an op (backend_choice.cpp), and `pockc tune`
// runs kernels on buffers of its own by filling in the data pointers.
#pragma once
#include <vector>

#include "blob/program_spec.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock {

class SpecOpDesc {
 public:
  // Dtypes, shapes, sizes and constness (blob weights are POCK_TENSOR_CONSTANT, as the engine
  // marks them) of every input and output; data pointers are null, an omitted input has rank -1.
  // `spec` and `op` must outlive the result: attribute strings and lists point into `op`.
  static Result<SpecOpDesc> describe(const ProgramSpec& spec, const OpSpec& op, int num_threads);

  SpecOpDesc(SpecOpDesc&&) = default;  // vectors keep their buffers, so desc's pointers stay valid
  SpecOpDesc& operator=(SpecOpDesc&&) = default;
  SpecOpDesc(const SpecOpDesc&) = delete;
  SpecOpDesc& operator=(const SpecOpDesc&) = delete;

  const pock_op_desc& desc() const { return desc_; }
  pock_tensor_desc& input(size_t i) { return inputs_[i]; }
  pock_tensor_desc& output(size_t i) { return outputs_[i]; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }

 private:
  SpecOpDesc() = default;
  pock_op_desc desc_{};
  std::vector<pock_tensor_desc> inputs_, outputs_;
  std::vector<pock_attr> attrs_;
};

}  // namespace pock
