// The engine's memory: the host's persistent region and arena, and one of each per device memory
// space of the blob (a backend that keeps tensors in memory of its own). A device space whose
// backend is loaded gets its regions through that backend's alloc and is reached only through its
// copy; one whose backend is absent here lives in host memory, so its ops can fall back to host
// backends and its Copy ops become plain copies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/mapped_file.hpp"

namespace pock {

struct SpaceSizes {
  std::string backend;  // "" for the host
  uint64_t arena_bytes = 0;
  uint64_t persistent_bytes = 0;
};

class MemorySpaces {
 public:
  MemorySpaces() = default;
  MemorySpaces(const MemorySpaces&) = delete;
  MemorySpaces& operator=(const MemorySpaces&) = delete;
  ~MemorySpaces();  // device regions go back through their backends

  // sizes[0] is the host's. A device region is zeroed (through copy) as the host's is.
  Status allocate(const std::vector<SpaceSizes>& sizes, const BackendSet& backends);

  size_t count() const { return spaces_.size(); }
  uint8_t* arena(uint8_t space) const { return spaces_[space].arena; }
  uint8_t* persistent(uint8_t space) const { return spaces_[space].persistent; }
  // The backend that owns a space's memory; nullptr when it is host memory.
  pock_backend_v1* device(uint8_t space) const { return spaces_[space].device; }
  const std::string& backend_name(uint8_t space) const { return spaces_[space].sizes.backend; }

  // Moves bytes between host memory and `space` (memcpy where the space is host memory).
  Status to_space(uint8_t space, void* dst, const void* src, size_t n) const;
  Status from_space(uint8_t space, void* dst, const void* src, size_t n) const;
  Status within_space(uint8_t space, void* dst, const void* src, size_t n) const;

  // Waits for every device's outstanding work (POCK_EXT_SYNCHRONIZE, where a device has it).
  Status synchronize() const;

  // The device of `space` failed: the space moves to host memory. Its persistent region comes out
  // through the device's copy (a device whose memory the host can map, as a DSP's shared buffers,
  // can still do that after it died), its arena starts empty, and its buffers go back to it.
  // Pointers into the space change: tensors and ops that use them must be set up again.
  Status move_to_host(uint8_t space);

  // The space whose device failed in the last copy or synchronize, or -1. The engine also sets it
  // when a device's op fails with POCK_ERR_BACKEND.
  int failed_space() const { return failed_; }
  void set_failed_space(int space) const { failed_ = space; }
  int space_of_device(const pock_backend_v1* device) const;

  // A buffer in `space` that lives as long as this object (rollback snapshots).
  Status allocate_extra(uint8_t space, size_t n, uint8_t** out, const char* what);

 private:
  struct Space {
    SpaceSizes sizes;
    pock_backend_v1* device = nullptr;
    uint8_t* arena = nullptr;
    uint8_t* persistent = nullptr;
    AlignedBuffer host_arena, host_persistent;  // host memory (the host, or an absent device)
    std::vector<void*> device_buffers;           // what to give back to `device`
    pock_synchronize_fn synchronize = nullptr;
  };
  Status device_copy(const Space& s, void* dst, const void* src, size_t n, pock_copy_direction direction) const;
  Status zero_device(const Space& s, uint8_t* dst, size_t n) const;

  std::vector<Space> spaces_;
  mutable int failed_ = -1;
};

}  // namespace pock
