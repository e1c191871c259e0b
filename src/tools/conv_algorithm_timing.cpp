#include "tools/conv_algorithm_timing.hpp"

#include "ir/conv_algorithm.hpp"

namespace pock::tools {

Result<std::vector<BackendTiming>> time_cpu_conv_algorithms(const ProgramSpec& spec, const OpSpec& op,
                                                            pock_backend_v1* cpu, const OpTimerOptions& options,
                                                            std::vector<std::string>* skipped) {
  std::vector<BackendTiming> out;
  for (ConvAlgorithm a : kConvAlgorithms) {
    OpSpec variant = op;
    variant.attrs.set(kConvAlgorithmAttr, std::string(conv_algorithm_name(a)));
    POCK_ASSIGN_OR_RETURN(const std::vector<KernelTime> times, time_op_on_backends(spec, variant, {cpu}, options));
    // The cpu backend claims the op or not whatever the algorithm; it refuses at prepare an
    // algorithm that cannot run it (kernels/cpu/conv_algorithm_choice.hpp).
    for (const KernelTime& t : times) {
      if (t.ok) {
        out.push_back({conv_algorithm_name(a), t.median_us});
      } else if (skipped) {
        skipped->push_back(std::string(conv_algorithm_name(a)) + ": " + t.error);
      }
    }
  }
  return out;
}

}  // namespace pock::tools
