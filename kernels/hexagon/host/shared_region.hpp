// The memory both sides of the plugin work in: one memfd the host maps and the DSP process maps
// too (it inherits the descriptor), so tensors never travel in messages — a record names them by
// offset. Here lives the allocator behind the backend's alloc/free: the runtime asks for a few
// large buffers (a persistent region, an arena, a rollback snapshot) once, at engine open.
// On a phone the region would be rpcmem/ION memory registered with FastRPC (docs/hexagon.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace pock::hexagon {

class SharedRegion {
 public:
  SharedRegion() = default;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion() { release(); }

  // Creates and maps `bytes` of shared memory; false with *error on failure. The descriptor
  // stays open (fd()) until close_fd(), for the DSP process to inherit.
  bool create(size_t bytes, std::string* error);
  void close_fd();
  void release();  // unmaps; every pointer into the region dies

  bool mapped() const { return base_ != nullptr; }
  int fd() const { return fd_; }
  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

  // First fit; nullptr when no free block is large enough. alignment: a power of two.
  void* allocate(size_t bytes, size_t alignment);
  bool free(void* p);  // false: not a live allocation of this region
  size_t live_allocations() const { return used_.size(); }

  // Whether [p, p + n) lies inside the region; its offset when it does.
  bool contains(const void* p, size_t n) const;
  uint32_t offset_of(const void* p) const { return static_cast<uint32_t>(static_cast<const uint8_t*>(p) - base_); }

 private:
  int fd_ = -1;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::map<size_t, size_t> free_;  // offset -> bytes, coalesced
  std::map<size_t, size_t> used_;  // offset -> bytes as carved (alignment padding included)
};

}  // namespace pock::hexagon
