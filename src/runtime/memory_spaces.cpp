#include "runtime/memory_spaces.hpp"

#include <cstring>

namespace pock {
namespace {

// Past the planned bytes: libraries that read whole vectors may read (never use) a few bytes past
// a tensor's end (XNNPACK's XNN_EXTRA_BYTES), and the last tensor can end where the arena does.
constexpr size_t kArenaSlack = 64;
constexpr size_t kAlignment = 64;

}  // namespace

MemorySpaces::~MemorySpaces() {
  for (Space& s : spaces_) {
    for (void* p : s.device_buffers) s.device->free(s.device->context, p);
  }
}

Status MemorySpaces::allocate(const std::vector<SpaceSizes>& sizes, const BackendSet& backends) {
  spaces_ = std::vector<Space>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    Space& s = spaces_[i];
    s.sizes = sizes[i];
    pock_backend_v1* owner = i == 0 ? nullptr : backends.find(s.sizes.backend);
    s.device = owner && owns_memory(*owner) ? owner : nullptr;
    if (!s.device) {
      POCK_RETURN_IF_ERROR(s.host_arena.allocate(s.sizes.arena_bytes + kArenaSlack, "arena"));
      POCK_RETURN_IF_ERROR(s.host_persistent.allocate(s.sizes.persistent_bytes, "persistent region"));
      s.arena = s.host_arena.data();
      s.persistent = s.host_persistent.data();
      continue;
    }
    if (s.device->get_proc_address) {
      s.synchronize = reinterpret_cast<pock_synchronize_fn>(s.device->get_proc_address(s.device->context, POCK_EXT_SYNCHRONIZE));
    }
    POCK_RETURN_IF_ERROR(allocate_extra(static_cast<uint8_t>(i), s.sizes.arena_bytes + kArenaSlack, &s.arena, "arena"));
    POCK_RETURN_IF_ERROR(
        allocate_extra(static_cast<uint8_t>(i), s.sizes.persistent_bytes, &s.persistent, "persistent region"));
    // State without an initial value (moments, accumulators) starts at zero, as on the host.
    POCK_RETURN_IF_ERROR(zero_device(s, s.persistent, s.sizes.persistent_bytes));
  }
  return Status::ok();
}

Status MemorySpaces::allocate_extra(uint8_t space, size_t n, uint8_t** out, const char* what) {
  Space& s = spaces_[space];
  *out = nullptr;
  if (n == 0) return Status::ok();
  if (!s.device) return Status(Code::kInternal, "extra buffers are for device spaces");
  void* p = s.device->alloc(s.device->context, n, kAlignment);
  if (!p) {
    return Status(Code::kOutOfMemory, "backend '" + s.sizes.backend + "' cannot allocate " + std::to_string(n) +
                                          " bytes for its " + what + ": " + s.device->last_error(s.device->context));
  }
  s.device_buffers.push_back(p);
  *out = static_cast<uint8_t*>(p);
  return Status::ok();
}

Status MemorySpaces::device_copy(const Space& s, void* dst, const void* src, size_t n,
                                 pock_copy_direction direction) const {
  if (n == 0) return Status::ok();
  const pock_status st = s.device->copy(s.device->context, dst, src, n, direction);
  if (st == POCK_OK) return Status::ok();
  if (st == POCK_ERR_BACKEND) failed_ = static_cast<int>(&s - spaces_.data());
  return Status(Code::kBackend, "backend '" + s.sizes.backend + "' failed to copy " + std::to_string(n) +
                                    " bytes: " + s.device->last_error(s.device->context));
}

Status MemorySpaces::zero_device(const Space& s, uint8_t* dst, size_t n) const {
  if (n == 0) return Status::ok();
  void* fn = s.device->get_proc_address ? s.device->get_proc_address(s.device->context, POCK_EXT_ZERO) : nullptr;
  if (fn) {
    const pock_status st = reinterpret_cast<pock_zero_fn>(fn)(s.device->context, dst, n);
    if (st == POCK_OK) return Status::ok();
    if (st == POCK_ERR_BACKEND) failed_ = static_cast<int>(&s - spaces_.data());
    return Status(Code::kBackend, "backend '" + s.sizes.backend + "' failed to zero " + std::to_string(n) +
                                      " bytes: " + s.device->last_error(s.device->context));
  }
  static const uint8_t zeros[16384] = {};
  for (size_t done = 0; done < n;) {
    const size_t chunk = std::min(n - done, sizeof(zeros));
    POCK_RETURN_IF_ERROR(device_copy(s, dst + done, zeros, chunk, POCK_COPY_HOST_TO_DEVICE));
    done += chunk;
  }
  return Status::ok();
}

Status MemorySpaces::synchronize() const {
  for (const Space& s : spaces_) {
    if (!s.synchronize) continue;
    const pock_status st = s.synchronize(s.device->context);
    if (st != POCK_OK) {
      if (st == POCK_ERR_BACKEND) failed_ = static_cast<int>(&s - spaces_.data());
      return Status(Code::kBackend, "backend '" + s.sizes.backend + "' failed: " + s.device->last_error(s.device->context));
    }
  }
  return Status::ok();
}

int MemorySpaces::space_of_device(const pock_backend_v1* device) const {
  for (size_t i = 0; i < spaces_.size(); ++i) {
    if (device && spaces_[i].device == device) return static_cast<int>(i);
  }
  return -1;
}

Status MemorySpaces::move_to_host(uint8_t space) {
  Space& s = spaces_[space];
  if (!s.device) return Status::ok();
  POCK_RETURN_IF_ERROR(s.host_arena.allocate(s.sizes.arena_bytes + kArenaSlack, "arena"));
  POCK_RETURN_IF_ERROR(s.host_persistent.allocate(s.sizes.persistent_bytes, "persistent region"));
  POCK_RETURN_IF_ERROR(device_copy(s, s.host_persistent.data(), s.persistent, s.sizes.persistent_bytes,
                                   POCK_COPY_DEVICE_TO_HOST));
  for (void* p : s.device_buffers) s.device->free(s.device->context, p);
  s.device_buffers.clear();
  s.device = nullptr;
  s.synchronize = nullptr;
  s.arena = s.host_arena.data();
  s.persistent = s.host_persistent.data();
  if (failed_ == space) failed_ = -1;
  return Status::ok();
}

Status MemorySpaces::to_space(uint8_t space, void* dst, const void* src, size_t n) const {
  const Space& s = spaces_[space];
  if (s.device) return device_copy(s, dst, src, n, POCK_COPY_HOST_TO_DEVICE);
  if (n) std::memcpy(dst, src, n);
  return Status::ok();
}

Status MemorySpaces::from_space(uint8_t space, void* dst, const void* src, size_t n) const {
  const Space& s = spaces_[space];
  if (s.device) return device_copy(s, dst, src, n, POCK_COPY_DEVICE_TO_HOST);
  if (n) std::memcpy(dst, src, n);
  return Status::ok();
}

Status MemorySpaces::within_space(uint8_t space, void* dst, const void* src, size_t n) const {
  const Space& s = spaces_[space];
  if (s.device) return device_copy(s, dst, src, n, POCK_COPY_DEVICE_TO_DEVICE);
  if (n) std::memmove(dst, src, n);
  return Status::ok();
}

}  // namespace pock
