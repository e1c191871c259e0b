// A launch's error as the Status of the op that launched it: "<Op> '<name>': <CUDA error>".
#pragma once
#include <string>

#include "kernels/cuda/stream.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

inline Status launched(const KernelCall& c, cudaError_t error) {
  if (error == cudaSuccess) return Status::ok();
  return check(error, std::string(c.desc->op) + " '" + c.desc->name + "'");
}

}  // namespace pock::cuda
