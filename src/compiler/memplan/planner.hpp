// Static memory planning: each buffer is a rectangle (first use, last use) x size, packed into one
// arena. Greedy by size, best fit into the gaps left by already placed overlapping buffers.
#pragma once
#include <cstdint>
#include <vector>

namespace pock {

struct BufferRequest {
  uint64_t size = 0;
  int32_t first = 0;  // index of the op that writes it
  int32_t last = 0;   // index of the last op that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per request
  uint64_t peak = 0;              // arena size
  uint64_t lower_bound = 0;       // max over time of the sum of live sizes (aligned)
};

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment = 64);

}  // namespace pock
