// The static memory planner: valid placements, peak vs the live-size lower bound.
#include <catch2/catch.hpp>
#include <random>

#include "compiler/memplan/planner.hpp"

using namespace pock;

namespace {

// Independent check: no two buffers that are live at the same time share a byte.
bool placements_disjoint(const std::vector<BufferRequest>& reqs, const MemoryPlan& plan) {
  for (size_t a = 0; a < reqs.size(); ++a) {
    for (size_t b = a + 1; b < reqs.size(); ++b) {
      const bool time = reqs[a].first <= reqs[b].last && reqs[b].first <= reqs[a].last;
      const bool space = plan.offsets[a] < plan.offsets[b] + reqs[b].size && plan.offsets[b] < plan.offsets[a] + reqs[a].size;
      if (time && space && reqs[a].size && reqs[b].size) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("a chain of buffers reuses memory", "[planner]") {
  // a -> b -> c, each dying when the next is produced: two buffers suffice.
  std::vector<BufferRequest> reqs = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  MemoryPlan plan = plan_memory(reqs);
  CHECK(plan.peak == 2048);
  CHECK(plan.lower_bound == 2048);
  CHECK(placements_disjoint(reqs, plan));
}

TEST_CASE("random lifetimes give disjoint placements near the bound", "[planner]") {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<BufferRequest> reqs;
    for (int i = 0; i < 200; ++i) {
      const int first = static_cast<int>(gen() % 300);
      const int len = static_cast<int>(gen() % 30);
      reqs.push_back({(gen() % 4096 + 1) * 64, first, first + len});
    }
    MemoryPlan plan = plan_memory(reqs);
    REQUIRE(placements_disjoint(reqs, plan));
    CHECK(plan.peak >= plan.lower_bound);
    for (size_t i = 0; i < reqs.size(); ++i) CHECK(plan.offsets[i] % 64 == 0);
    // Greedy-by-size is not optimal in general; on random interval sets it stays within ~25%.
    CHECK(static_cast<double>(plan.peak) <= 1.25 * static_cast<double>(plan.lower_bound));
  }
}

TEST_CASE("a buffer alive at the busiest moment does not end up above it", "[planner]") {
  // a, b, c, d. Largest first puts d and a at 0 (they never meet), b on a at 192, and c, alive
  // with both d and b, on top at 320: 448 bytes. The busiest moment is op 4 (c + d = 384);
  // stacking c then d there, then a at 0 and b at 192, fits everything in those 384 bytes.
  const std::vector<BufferRequest> reqs = {{192, 2, 2}, {128, 1, 3}, {128, 3, 5}, {256, 4, 4}};
  const MemoryPlan plan = plan_memory(reqs);
  CHECK(plan.lower_bound == 384);
  CHECK(plan.peak == 384);
  CHECK(placements_disjoint(reqs, plan));
}
