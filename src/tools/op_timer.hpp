// Times one op of a blob by itself on every backend that claims it: the measurement behind
// `pockc tune`. The op runs on buffers of its own (blob weights where the op reads them,
// synthetic values elsewhere), prepared and executed through the backend ABI as the engine does.
#pragma once
#include <string>
#include <vector>

#include "blob/program_spec.hpp"
#include "pock/status.hpp"
#include "runtime/backend_set.hpp"

namespace pock::tools {

struct OpTimerOptions {
  int threads = 0;         // pock_op_desc::num_threads (0: one per core)
  int repeats = 5;         // timed runs per backend, after one untimed warm-up run
  double budget_ms = 200;  // stop repeating once a backend has spent this long (one run at least)
  // Time each run by the process's CPU time instead of the wall clock: what one thread spent,
  // unaffected by other processes taking the core (a shared machine). Only meaningful when the
  // kernels run on the calling thread alone (threads == 1).
  bool cpu_time = false;
};

struct KernelTime {
  std::string backend;
  bool ok = false;
  double median_us = 0;
  int runs = 0;
  std::string error;  // when !ok: why prepare or execute failed
};

// One entry per backend whose supports_op claims the op, in `backends` order. Fails only when the
// op's buffers cannot be set up (bad tensor index, out of memory).
Result<std::vector<KernelTime>> time_op_on_backends(const ProgramSpec& spec, const OpSpec& op,
                                                    const std::vector<pock_backend_v1*>& backends,
                                                    const OpTimerOptions& options);

}  // namespace pock::tools
