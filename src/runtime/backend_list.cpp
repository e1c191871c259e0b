#include "runtime/backend_list.hpp"

#include <algorithm>

#include "runtime/table_backend.hpp"

namespace pock {

std::vector<std::string> builtin_backend_names() { return {"ref"}; }

std::vector<BackendHandle> make_backends(const std::string& preferred) {
  std::vector<BackendHandle> out;
  out.push_back(make_table_backend("ref", &ref_kernels()));
  if (!preferred.empty()) {
    std::stable_partition(out.begin(), out.end(), [&](const BackendHandle& b) { return preferred == b->name; });
  }
  return out;
}

}  // namespace pock
