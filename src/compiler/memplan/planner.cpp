#include "compiler/memplan/planner.hpp"

#include <algorithm>
#include <numeric>

namespace pock {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

bool overlaps_in_time(const BufferRequest& a, const BufferRequest& b) { return a.first <= b.last && b.first <= a.last; }

int32_t lifetime(const BufferRequest& r) { return r.last - r.first; }

// Largest first; of equal sizes, the longest lived first.
bool larger_first(const BufferRequest& a, const BufferRequest& b) {
  if (a.size != b.size) return a.size > b.size;
  return lifetime(a) > lifetime(b);
}

// Places the buffers one by one in `order`: each goes into the smallest gap that fits among the
// already placed buffers whose lifetimes overlap it, or above them all. Returns the peak.
uint64_t place(const std::vector<BufferRequest>& requests, const std::vector<size_t>& order, uint64_t alignment,
               std::vector<uint64_t>* offsets) {
  offsets->assign(requests.size(), 0);
  auto extent = [&](size_t i) { return align_up(std::max<uint64_t>(requests[i].size, 1), alignment); };
  uint64_t peak = 0;
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping placed buffers
  for (size_t idx : order) {
    const uint64_t size = extent(idx);
    busy.clear();
    for (size_t p : placed) {
      if (overlaps_in_time(requests[idx], requests[p])) busy.push_back({(*offsets)[p], (*offsets)[p] + extent(p)});
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
    (*offsets)[idx] = best;
    peak = std::max(peak, best + size);
    placed.push_back(idx);
  }
  return peak;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  MemoryPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  // Lower bound: sweep over time of the aligned live total; `busiest` is when it is reached.
  int32_t horizon = 0;
  for (const auto& r : requests) horizon = std::max(horizon, r.last + 1);
  std::vector<int64_t> delta(static_cast<size_t>(horizon) + 2, 0);
  for (const auto& r : requests) {
    delta[r.first] += static_cast<int64_t>(align_up(r.size, alignment));
    delta[r.last + 1] -= static_cast<int64_t>(align_up(r.size, alignment));
  }
  int64_t live = 0;
  int32_t busiest = 0;
  for (size_t t = 0; t < delta.size(); ++t) {
    live += delta[t];
    if (static_cast<uint64_t>(live) > plan.lower_bound) {
      plan.lower_bound = static_cast<uint64_t>(live);
      busiest = static_cast<int32_t>(t);
    }
  }
  if (n == 0) return plan;

  // Two placement orders, keeping the smaller arena. Largest first packs most plans to within a
  // percent or two of the bound, but small long-lived buffers placed last can find no gap that
  // stays free for their whole life and land on top. The second order first stacks the buffers
  // live at the busiest moment in the order they were allocated (that moment then needs exactly
  // the bound, and a stack matches nested lifetimes), then the rest largest first. Neither wins
  // everywhere: on the zoo's training graphs each removes the other's worst cases (docs/memory.md).
  std::vector<size_t> by_size(n);
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return larger_first(requests[a], requests[b]); });
  auto live_at_busiest = [&](size_t i) { return requests[i].first <= busiest && busiest <= requests[i].last; };
  std::vector<size_t> busiest_first = by_size;
  std::stable_sort(busiest_first.begin(), busiest_first.end(), [&](size_t a, size_t b) {
    const bool la = live_at_busiest(a), lb = live_at_busiest(b);
    if (la != lb) return la;
    return la && requests[a].first < requests[b].first;
  });

  plan.peak = place(requests, by_size, alignment, &plan.offsets);
  std::vector<uint64_t> offsets;
  const uint64_t peak = place(requests, busiest_first, alignment, &offsets);
  if (peak < plan.peak) {
    plan.peak = peak;
    plan.offsets = std::move(offsets);
  }
  return plan;
}

}  // namespace pock
