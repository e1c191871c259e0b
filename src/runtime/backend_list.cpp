#include "runtime/backend_list.hpp"

#include <algorithm>

#include "runtime/table_backend.hpp"

namespace pock {

std::vector<std::string> builtin_backend_names() {
#ifdef POCK_HAVE_NEON
  return {"neon", "cpu", "ref"};
#else
  return {"cpu", "ref"};
#endif
}

std::vector<BackendHandle> make_backends(const std::string& preferred) {
  std::vector<BackendHandle> out;
  // cpu kernels score above ref's 1, so cpu wins wherever it has a kernel; ref is the fallback.
#ifdef POCK_HAVE_NEON
  // neon kernels score above cpu's portable loops, so neon wins wherever it has a kernel.
  out.push_back(make_table_backend("neon", &neon_kernels()));
#endif
  out.push_back(make_table_backend("cpu", &cpu_kernels()));
  out.push_back(make_table_backend("ref", &ref_kernels()));
  if (!preferred.empty()) {
    std::stable_partition(out.begin(), out.end(), [&](const BackendHandle& b) { return preferred == b->name; });
  }
  return out;
}

}  // namespace pock
