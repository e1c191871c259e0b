#include "shared_region.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pock::hexagon {

bool SharedRegion::create(size_t bytes, std::string* error) {
  release();
  // Anonymous (no name under /dev/shm): the memory goes away with its last mapping, so a crash on
  // either side leaks nothing. MFD_CLOEXEC: only the DSP process, which the spawn code hands it
  // to explicitly, inherits it.
  fd_ = memfd_create("pock-hexagon-region", MFD_CLOEXEC);
  if (fd_ < 0) {
    *error = std::string("memfd_create failed: ") + std::strerror(errno);
    return false;
  }
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    *error = "cannot size the shared region to " + std::to_string(bytes) + " bytes: " + std::strerror(errno);
    close_fd();
    return false;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    *error = std::string("cannot map the shared region: ") + std::strerror(errno);
    close_fd();
    return false;
  }
  base_ = static_cast<uint8_t*>(p);
  size_ = bytes;
  free_ = {{0, bytes}};
  used_.clear();
  return true;
}

void SharedRegion::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void SharedRegion::release() {
  close_fd();
  if (base_) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
  free_.clear();
  used_.clear();
}

void* SharedRegion::allocate(size_t bytes, size_t alignment) {
  if (!base_ || bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const size_t start = it->first, size = it->second;
    const size_t aligned = (start + alignment - 1) & ~(alignment - 1);
    if (aligned < start || aligned - start > size || size - (aligned - start) < bytes) continue;
    const size_t tail = size - (aligned - start) - bytes;
    free_.erase(it);
    if (aligned > start) free_[start] = aligned - start;
    if (tail > 0) free_[aligned + bytes] = tail;
    used_[aligned] = bytes;
    return base_ + aligned;
  }
  return nullptr;
}

bool SharedRegion::free(void* p) {
  if (!base_ || !contains(p, 0)) return false;
  auto it = used_.find(offset_of(p));
  if (it == used_.end()) return false;
  size_t start = it->first, size = it->second;
  used_.erase(it);
  // Coalesce with the free neighbours on both sides.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += size;
      return true;
    }
  }
  free_[start] = size;
  return true;
}

bool SharedRegion::contains(const void* p, size_t n) const {
  const auto* b = static_cast<const uint8_t*>(p);
  return base_ && b >= base_ && b <= base_ + size_ && n <= static_cast<size_t>(base_ + size_ - b);
}

}  // namespace pock::hexagon
