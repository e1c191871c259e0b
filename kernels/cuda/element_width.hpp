// Ops that move elements without reading them (shape ops, Where's branches) run one kernel per
// element width: this calls f(T{}) with T the unsigned integer of a dtype's width.
#pragma once
#include <cstdint>

#include "pock/types.hpp"

namespace pock::cuda {

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

}  // namespace pock::cuda
