// CUDA graphs for the cuda backend's steps, on unless POCK_CUDA_GRAPHS=0. With them, execute_op
// only records the op; the recorded run of ops is launched when the host next looks at device
// memory — copy, pock_synchronize, the all_finite checks — as the ABI allows a device that batches ops
// (docs/backend-abi.md, *Asynchronous devices*). The engine runs the same ops in the same order
// every step, so the same run comes back: the second time it is captured into a graph, and from
// then on one graph launch replaces its kernel launches. Tensor addresses never change and the
// kernels read step counters and scalars from device memory, so a graph stays valid; preparing or
// releasing an op drops every graph (a workspace may have moved).
// A run that cannot be captured (a kernel that waits on the host) is marked and runs op by op.
// Errors of a recorded op surface where the run is launched: in copy or pock_synchronize.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <vector>

#include "kernels/cuda/instance.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

class StepGraphs {
 public:
  StepGraphs() = default;
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;
  ~StepGraphs() { clear(); }

  static bool enabled_by_environment();

  // Prepare time: room for one more op in a run, so that record() never allocates.
  void reserve_one_more();
  void record(const KernelDef* def, void* state, const pock_op_desc* desc);
  // Launches what was recorded (graph, capture, or op by op), on `in`'s stream; `in` must be the
  // thread's current instance.
  Status flush(Instance& in);
  // Drops every graph (and anything recorded but not launched).
  void clear();
  size_t graphs() const;  // captured so far (tests, diagnostics)

 private:
  struct Recorded {
    const KernelDef* def;
    void* state;
    const pock_op_desc* desc;
  };
  struct Entry {
    int seen = 0;
    bool uncapturable = false;
    cudaGraphExec_t exec = nullptr;
  };
  Status run_op_by_op();
  Status capture_and_launch(Instance& in, Entry& entry);

  std::vector<Recorded> pending_;
  std::vector<const void*> key_;  // the descs of pending_, in order: a run's identity
  size_t capacity_ = 0;
  std::map<std::vector<const void*>, Entry> entries_;
};

}  // namespace pock::cuda
