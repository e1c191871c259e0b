#include "runtime/kernel_scope.hpp"

#include <new>

namespace pock {

Status KernelScope::reserve_scratch(size_t bytes, const char* what) {
  if (bytes <= scratch_.size() && (bytes == 0 || scratch_.data())) return Status::ok();
  return scratch_.allocate(bytes, what);  // nothing in it survives a prepare: no copy needed
}

std::shared_ptr<void> KernelScope::find_shared(const std::string& key) const {
  const auto it = shared_.find(key);
  return it == shared_.end() ? nullptr : it->second.object.lock();
}

bool KernelScope::put_shared(const std::string& key, const std::shared_ptr<void>& object, size_t bytes) {
  try {
    shared_[key] = Shared{object, bytes};
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

size_t KernelScope::live_shared() const {
  size_t n = 0;
  for (const auto& entry : shared_) n += entry.second.object.expired() ? 0 : 1;
  return n;
}

size_t KernelScope::shared_bytes() const {
  size_t bytes = 0;
  for (const auto& entry : shared_) bytes += entry.second.object.expired() ? 0 : entry.second.bytes;
  return bytes;
}

}  // namespace pock
