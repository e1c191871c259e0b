// What the ops bound to one in-tree backend instance share. The runtime makes one backend instance
// per engine (make_backends), and an engine runs its ops one at a time on one thread, so:
//   - scratch: one region sized to the largest need of any op, instead of one buffer per op. An op
//     may use it only during its own run; its contents are undefined between runs.
//   - shared objects: what a kernel builds from constant inputs (a packed frozen weight) is built
//     once and reused by every op instance with the same key — the train, eval and infer functions
//     each bind their own instance of the same layer. The scope does not keep them alive: an
//     object dies with the last op holding it, so a key naming a buffer's address never finds an
//     object built from an earlier buffer at that address (pockc tune prepares ops one by one on
//     transient buffers).
// Both are filled only while ops are prepared; a run reads them and allocates nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "runtime/mapped_file.hpp"

namespace pock {

class KernelScope {
 public:
  KernelScope() = default;
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

  // Makes scratch() at least `bytes` long. Prepare only: growing moves the region, so a kernel
  // reads scratch() at run time (or re-binds what it bound to the old address).
  Status reserve_scratch(size_t bytes, const char* what);
  uint8_t* scratch() const { return scratch_.data(); }
  size_t scratch_size() const { return scratch_.size(); }

  // The live object under `key`, or null. Keys name the kind of object and everything it was built
  // from (e.g. a weight's address and the convolution's geometry).
  std::shared_ptr<void> find_shared(const std::string& key) const;
  // Makes `object` what find_shared(key) returns while some op holds it. False when out of memory.
  // `bytes`: the memory it holds, counted in shared_bytes() while it lives.
  bool put_shared(const std::string& key, const std::shared_ptr<void>& object, size_t bytes = 0);
  // How many shared objects are alive (tests, diagnostics).
  size_t live_shared() const;
  // The bytes that live shared objects declared (the workspace `pockc inspect` reports).
  size_t shared_bytes() const;

 private:
  struct Shared {
    std::weak_ptr<void> object;
    size_t bytes = 0;
  };
  AlignedBuffer scratch_;
  std::unordered_map<std::string, Shared> shared_;
};

}  // namespace pock
