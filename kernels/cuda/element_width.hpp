// Ops that move elements without reading them (shape ops, Where's branches) run one kernel per
// element width: these call f(T{}) with T an unsigned integer (or 16-byte block) of that width.
#pragma once
#include <cstdint>

#include "pock/types.hpp"

namespace pock::cuda {

// 16 bytes moved as one (a single 128-bit load and store on the device).
struct alignas(16) Bytes16 {
  uint32_t w[4];
};

// Every dtype is 1, 2, 4 or 8 bytes wide.
template <typename F>
auto with_element_width(int32_t dtype, F&& f) {
  switch (dtype_size(static_cast<DType>(dtype))) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

// For moves of several elements at once: f(T{}) with T of `bytes` (1, 2, 4, 8 or 16) bytes.
template <typename F>
auto with_move_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return f(Bytes16{});
  }
}

}  // namespace pock::cuda
