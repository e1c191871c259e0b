#include "compiler/memplan/planner.hpp"

#include <algorithm>
#include <numeric>

namespace pock {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

bool overlaps_in_time(const BufferRequest& a, const BufferRequest& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  MemoryPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  // Lower bound: sweep over time of the aligned live total.
  int32_t horizon = 0;
  for (const auto& r : requests) horizon = std::max(horizon, r.last + 1);
  std::vector<int64_t> delta(static_cast<size_t>(horizon) + 2, 0);
  for (const auto& r : requests) {
    delta[r.first] += static_cast<int64_t>(align_up(r.size, alignment));
    delta[r.last + 1] -= static_cast<int64_t>(align_up(r.size, alignment));
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    plan.lower_bound = std::max<uint64_t>(plan.lower_bound, static_cast<uint64_t>(live));
  }

  // Largest first (ties: longest lived first); each goes into the lowest gap that fits among the
  // already placed buffers whose lifetimes overlap it.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return requests[a].last - requests[a].first > requests[b].last - requests[b].first;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping placed buffers
  for (size_t idx : order) {
    const BufferRequest& r = requests[idx];
    const uint64_t size = align_up(std::max<uint64_t>(r.size, 1), alignment);
    busy.clear();
    for (size_t p : placed) {
      if (overlaps_in_time(r, requests[p])) busy.push_back({plan.offsets[p], plan.offsets[p] + align_up(std::max<uint64_t>(requests[p].size, 1), alignment)});
    }
    std::sort(busy.begin(), busy.end());
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, cursor = 0;
    for (const auto& [start, end] : busy) {
      if (start >= cursor + size && start - cursor < best_gap) {
        best = cursor;
        best_gap = start - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == UINT64_MAX) best = cursor;
    plan.offsets[idx] = best;
    plan.peak = std::max(plan.peak, best + size);
    placed.push_back(idx);
  }
  return plan;
}

}  // namespace pock
