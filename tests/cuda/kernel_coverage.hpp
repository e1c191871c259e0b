// Which kernels of the cuda table the cases of kernel_cases.hpp reach, found without a GPU: a case
// reaches the kernel the cuda backend claims it with (supports_op, which searches the table by
// (op, kernel_key_dtype) as the runtime does), provided ref runs it too.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/cuda/kernel_cases.hpp"

namespace pock::test {

using KernelKey = std::pair<std::string, DType>;

// The table key of the kernel `c` binds: the op and the dtype the backend looks its kernel up by
// (Cast by its input's dtype, Gather by its data's, Where by its condition's).
inline KernelKey kernel_key_of(const DeviceCase& c) {
  auto described = describe_case(c, false);
  REQUIRE(described.is_ok());
  auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
  REQUIRE(d.is_ok());
  return {c.op, kernel_key_dtype(d->desc())};
}

inline std::string kernel_name(const KernelKey& k) { return k.first + " (" + dtype_name(k.second) + ")"; }

struct CudaCoverage {
  size_t kernels = 0;                // (op, dtype) kernels in the cuda table
  std::set<KernelKey> written;       // reached by a written case
  std::vector<DeviceCase> generic;   // generic cases for f32 kernels no written case reaches
  std::set<KernelKey> generic_only;  // the kernels those reach
  std::set<std::string> missing_f32, missing_other;  // reached by no case
};

// Written cases that cuda does not claim or ref does not run reach nothing (the tests fail them).
inline CudaCoverage plan_coverage(CudaBackend& cuda, pock_backend_v1& ref, const std::vector<DeviceCase>& written) {
  CudaCoverage plan;
  for (const DeviceCase& c : written) {
    if (cuda.score(c) > 0) plan.written.insert(kernel_key_of(c));
  }
  for (const KernelDef* def : cuda_kernels().all()) {
    ++plan.kernels;
    const KernelKey key{def->op, def->dtype};
    if (plan.written.count(key)) continue;
    if (def->dtype == DType::kF32) {
      for (const DeviceCase& c : generic_cases(def->op)) {
        if (cuda.score(c) <= 0 || !run_on_host(ref, c, false).status.is_ok()) continue;
        plan.generic.push_back(c);
        plan.generic_only.insert(key);
      }
    }
    if (plan.generic_only.count(key)) continue;
    (def->dtype == DType::kF32 ? plan.missing_f32 : plan.missing_other).insert(kernel_name(key));
  }
  return plan;
}

// An uncovered f32 kernel fails (coverage must not regress silently); other dtypes are listed.
inline void require_full_coverage(const CudaCoverage& plan) {
  std::string f32, other;
  for (const std::string& s : plan.missing_f32) f32 += " " + s;
  for (const std::string& s : plan.missing_other) other += " " + s;
  if (!other.empty()) WARN("cuda kernels of other dtypes no case reaches:" << other);
  INFO("f32 cuda kernels no case reaches (write a case in tests/cuda/kernel_cases_*.hpp):" << f32);
  CHECK(plan.missing_f32.empty());
}

}  // namespace pock::test
