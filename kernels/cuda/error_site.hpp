// How a functor of kernels/cuda reports bad input it finds on the device (an index out of range,
// a label outside the classes), where it cannot return a status: it stores its op's site id
// (device_error.hpp: registered at prepare with ref's message) into the instance's error word,
// and pock_synchronize reports that site as the step's failure. Host code and tests pass their
// own word, or none.
#pragma once
#include <cstdint>

#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

struct ErrorSite {
  int32_t* word = nullptr;  // null: nowhere to report (the report is dropped)
  int32_t id = 0;

  // A plain store, not an atomic: atomics on mapped host memory are not portable (PCIe), and any
  // id stored names a real failure of this step, so racing reporters may overwrite each other.
  POCK_HD void report() const {
    if (word) *reinterpret_cast<volatile int32_t*>(word) = id;
  }
};

}  // namespace pock::cuda
