// Kernel timings measured on a target device (`pockc tune`), the input of backend switching: for
// each op signature, the median time of every backend that ran it. JSON on disk, documented in
// docs/pockc.md ("Backend switching").
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "blob/program_spec.hpp"
#include "pock/status.hpp"

namespace pock {

// What decides which kernel is fastest: op type, dtype and shape of every input and output, which
// inputs are constant (blob weights: XNNPACK repacks those once), and the attributes. The node's
// name is not part of it, so equal layers share one measurement, nor is the cpu algorithm a tuned
// blob names (attribute "cpu_algorithm"): a tuned blob tunes again under the signatures that
// compile --profile looks up. Readable on purpose, e.g.
//   Conv2d(f32[4,3,8,8], const f32[8,3,3,3], -) -> (f32[4,8,6,6]) {groups=1, strides=[1,1]}
std::string op_signature(const ProgramSpec& spec, const OpSpec& op);

struct BackendTiming {
  std::string backend;
  double median_us = 0;
};

struct ProfiledOp {
  std::string signature;
  std::string op;                      // the op type, for readers of the file
  int64_t count = 0;                   // ops of the tuned blob with this signature
  std::vector<BackendTiming> timings;  // backends that ran it
  std::map<std::string, std::string> errors;  // backend -> why it could not run it
  // Convolutions (ir/conv_algorithm.hpp): the cpu backend's median per algorithm that ran it,
  // names as the attribute "cpu_algorithm" spells them. Empty for other ops.
  std::vector<BackendTiming> cpu_algorithms;
};

struct BackendProfile {
  int threads = 0;    // the num_threads the kernels ran with (0: one per core)
  int repeats = 0;    // timed runs per (op, backend), at most
  std::vector<std::string> backends;  // candidates on the tuned device, best first
  std::vector<ProfiledOp> ops;
};

// The entry with the lowest median (the first of equal ones), nullptr for none.
const BackendTiming* lowest_median(const std::vector<BackendTiming>& timings);

// Signature -> the backend with the lowest median, for every op that some backend ran.
std::unordered_map<std::string, std::string> fastest_backends(const BackendProfile& profile);
// Signature -> the cpu convolution algorithm with the lowest median, for every op with some.
std::unordered_map<std::string, std::string> fastest_cpu_algorithms(const BackendProfile& profile);

std::string backend_profile_json(const BackendProfile& profile);
// Errors name the field at fault; `source` (a path) goes into the messages.
Result<BackendProfile> parse_backend_profile(std::string_view json, const std::string& source);
Result<BackendProfile> load_backend_profile(const std::string& path);

}  // namespace pock
