#include "runtime/kernel_scope.hpp"

#include <new>

namespace pock {

Status KernelScope::reserve_scratch(size_t bytes, const char* what) {
  if (bytes <= scratch_.size() && (bytes == 0 || scratch_.data())) return Status::ok();
  return scratch_.allocate(bytes, what);  // nothing in it survives a prepare: no copy needed
}

std::shared_ptr<void> KernelScope::find_shared(const std::string& key) const {
  const auto it = shared_.find(key);
  return it == shared_.end() ? nullptr : it->second.lock();
}

bool KernelScope::put_shared(const std::string& key, const std::shared_ptr<void>& object) {
  try {
    shared_[key] = object;
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

size_t KernelScope::live_shared() const {
  size_t n = 0;
  for (const auto& entry : shared_) n += entry.second.expired() ? 0 : 1;
  return n;
}

}  // namespace pock
