// What every cuda kernel's run() does around its launch: name the op in a launch error, and move
// whole tensors with the copy engine. Both go on the backend's stream (stream.hpp).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/stream.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

// The launch's error (a missing architecture, a bad configuration) as a Status naming the op.
inline Status launched(const KernelCall& c, cudaError_t error) {
  if (error == cudaSuccess) return Status::ok();
  return check(error, std::string(c.desc->op) + " '" + c.desc->name + "'");
}

// Output 0 = input 0, byte for byte; nothing to do when the planner gave both one buffer.
inline Status copy_input_to_output(const KernelCall& c) {
  if (c.out(0).data == c.in(0).data || c.out(0).nbytes == 0) return Status::ok();
  return launched(c, cudaMemcpyAsync(c.out(0).data, c.in(0).data, c.out(0).nbytes, cudaMemcpyDeviceToDevice,
                                     current_stream()));
}

}  // namespace pock::cuda
