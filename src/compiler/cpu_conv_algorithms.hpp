// Per-layer convolution algorithms (docs/pockc.md, "Convolution algorithms"): where the profile
// of `pockc tune` timed the cpu backend's algorithms for an op's signature, the compiler records
// the fastest in the blob as the op's attribute "cpu_algorithm" (ir/conv_algorithm.hpp), which
// the cpu backend obeys and every other backend ignores.
#pragma once
#include <string>
#include <vector>

#include "blob/program_spec.hpp"
#include "pock/status.hpp"

namespace pock {

// By op index of `spec`: the algorithm's name, or "" where the profile timed none (or there is no
// profile: `profile_path` empty). A profile that cannot be read or parsed is an error naming it.
Result<std::vector<std::string>> profiled_cpu_algorithms(const std::string& profile_path, const ProgramSpec& spec);

}  // namespace pock
