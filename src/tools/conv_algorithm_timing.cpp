#include "tools/conv_algorithm_timing.hpp"

#include <algorithm>
#include <map>

#include "ir/conv_algorithm.hpp"

namespace pock::tools {
namespace {

// Rounds over all the algorithms, each keeping the lowest of its medians: the algorithms take
// turns, so that a burst of load from other processes (a shared machine) slows one round of
// every algorithm rather than all the runs of one, and the lowest median drops that round.
constexpr int kRounds = 3;

}  // namespace

Result<std::vector<BackendTiming>> time_cpu_conv_algorithms(const ProgramSpec& spec, const OpSpec& op,
                                                            pock_backend_v1* cpu, const OpTimerOptions& options,
                                                            std::vector<std::string>* skipped) {
  std::map<ConvAlgorithm, double> best_us;
  std::map<ConvAlgorithm, std::string> refused;
  for (int round = 0; round < kRounds; ++round) {
    for (ConvAlgorithm a : kConvAlgorithms) {
      if (refused.count(a)) continue;
      OpSpec variant = op;
      variant.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(a)));
      POCK_ASSIGN_OR_RETURN(const std::vector<KernelTime> times, time_op_on_backends(spec, variant, {cpu}, options));
      // The cpu backend claims the op or not whatever the algorithm; it refuses at prepare an
      // algorithm that cannot run it (kernels/cpu/conv_algorithm_choice.hpp).
      for (const KernelTime& t : times) {
        if (!t.ok) {
          refused[a] = t.error;
          continue;
        }
        auto [it, added] = best_us.emplace(a, t.median_us);
        if (!added) it->second = std::min(it->second, t.median_us);
      }
    }
  }
  std::vector<BackendTiming> out;
  for (ConvAlgorithm a : kConvAlgorithms) {
    auto it = best_us.find(a);
    if (it != best_us.end() && !refused.count(a)) out.push_back({conv_algorithm_name(a), it->second});
    if (refused.count(a) && skipped) skipped->push_back(std::string(conv_algorithm_name(a)) + ": " + refused[a]);
  }
  return out;
}

}  // namespace pock::tools
