// The pieces an op cuts from the backend's workspace (stream.hpp: reserved at prepare, one
// region for every op of the instance): measured at prepare with a null base, cut at run from
// workspace(), by the same code, so the two agree.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pock::cuda {

// Consecutive, 256-byte aligned pieces of the workspace; with a null base it only measures.
struct ScratchLayout {
  char* base;
  int64_t used = 0;
  template <typename T>
  T* take(int64_t count) {
    T* p = base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += (count * static_cast<int64_t>(sizeof(T)) + 255) / 256 * 256;
    return p;
  }
  size_t bytes() const { return static_cast<size_t>(used); }
};

}  // namespace pock::cuda
