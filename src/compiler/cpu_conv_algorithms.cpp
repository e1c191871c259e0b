#include "compiler/cpu_conv_algorithms.hpp"

#include "compiler/backend_profile.hpp"
#include "ir/conv_algorithm.hpp"

namespace pock {

Result<std::vector<std::string>> profiled_cpu_algorithms(const std::string& profile_path, const ProgramSpec& spec) {
  std::vector<std::string> out(spec.ops.size());
  if (profile_path.empty()) return out;
  POCK_ASSIGN_OR_RETURN(const BackendProfile profile, load_backend_profile(profile_path));
  const auto fastest = fastest_cpu_algorithms(profile);
  if (fastest.empty()) return out;
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    if (!has_conv_algorithms(spec.ops[i].op)) continue;
    const auto it = fastest.find(op_signature(spec, spec.ops[i]));
    if (it != fastest.end()) out[i] = it->second;
  }
  return out;
}

}  // namespace pock
