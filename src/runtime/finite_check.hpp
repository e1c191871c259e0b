// After a training step: whether the trained parameters are still finite. Host memory is scanned
// here; a device is asked about its own memory — all its parameters in one call when it has
// POCK_EXT_ALL_FINITE_MANY, one call per parameter when it has only POCK_EXT_ALL_FINITE, not at
// all otherwise (the loss check stands alone then: reading its memory back would be an unplanned
// copy). The lists are built once by plan(), so that check() allocates nothing unless it fails.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"
#include "runtime/memory_spaces.hpp"

namespace pock {

// Whether none of the n floats at v is NaN or Inf (the host scan, exposed for its tests).
bool host_floats_finite(const float* v, size_t n);
// Whether every one of the n floats at v has |v| <= limit (NaN never does).
bool host_floats_bounded(const float* v, size_t n, float limit);

class FiniteCheck {
 public:
  struct Parameter {
    const char* name;  // outlives the check (the blob's string)
    uint8_t space;
    pock_buffer_span span;
  };

  // Groups `parameters` by memory space and looks up each device's extensions. Again whenever
  // the spaces change (a dropped device's parameters move to the host).
  void plan(const std::vector<Parameter>& parameters, const MemorySpaces& spaces);
  // kNumerical naming a parameter that holds NaN or Inf; kBackend when a device could not answer
  // (its space is then marked failed in `spaces`).
  Status check(const MemorySpaces& spaces) const;

 private:
  struct Group {
    uint8_t space = 0;
    pock_backend_v1* device = nullptr;  // nullptr: host memory
    pock_all_finite_many_fn many = nullptr;
    pock_all_finite_fn one = nullptr;
    std::vector<pock_buffer_span> buffers;
    std::vector<const char*> names;  // names[i] is buffers[i]'s parameter
  };
  static Status check_host(const Group& g);
  static Status check_device(const Group& g, const MemorySpaces& spaces);

  std::vector<Group> groups_;
};

}  // namespace pock
