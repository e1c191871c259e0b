// The second half of `pockc tune`: for each convolution of a blob, the cpu backend's time with
// each algorithm it can run the op with (ir/conv_algorithm.hpp), so that `pockc compile --profile`
// records the fastest per layer.
#pragma once
#include <string>
#include <vector>

#include "compiler/backend_profile.hpp"
#include "tools/op_timer.hpp"

namespace pock::tools {

// The op's time per algorithm on `cpu` (the backend named "cpu"), with the op's attribute
// "cpu_algorithm" set to each in turn and timed as time_op_on_backends times backends, in a few
// interleaved rounds: the lowest of each algorithm's medians. An algorithm that cannot run the op
// (or fails in any round) is left out; `skipped` (optional) gets "name: why" for each.
Result<std::vector<BackendTiming>> time_cpu_conv_algorithms(const ProgramSpec& spec, const OpSpec& op,
                                                            pock_backend_v1* cpu, const OpTimerOptions& options,
                                                            std::vector<std::string>* skipped);

}  // namespace pock::tools
