// A team of OS threads for the row routines of kernels/cuda/*_logic.hpp: each lane a thread, the
// reductions a barrier, the lanes' values combined, and a second barrier before the slots are
// reused, as BlockTeam does on the device. Rows run this way check what a SoloTeam cannot: the
// lane-strided loops, that every lane receives the reduced value, and that no lane writes what
// another still has to read.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace pock::test {

class LaneBarrier {
 public:
  explicit LaneBarrier(int lanes) : lanes_(lanes), slots_(static_cast<size_t>(lanes)) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const int64_t generation = generation_;
    if (++arrived_ == lanes_) {
      arrived_ = 0;
      ++generation_;
      ready_.notify_all();
      return;
    }
    ready_.wait(lock, [&] { return generation_ != generation; });
  }
  std::vector<float>& slots() { return slots_; }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  int lanes_, arrived_ = 0;
  int64_t generation_ = 0;
  std::vector<float> slots_;
};

struct ThreadTeam {
  int lane, lanes;
  LaneBarrier* barrier;
  template <typename Combine>
  float reduce(float v, float identity, Combine combine) const {
    barrier->slots()[static_cast<size_t>(lane)] = v;
    barrier->wait();
    float total = identity;
    for (float s : barrier->slots()) total = combine(total, s);
    barrier->wait();
    return total;
  }
  float sum(float v) const { return reduce(v, 0.0f, [](float a, float b) { return a + b; }); }
  float max(float v) const { return reduce(v, -INFINITY, [](float a, float b) { return std::fmax(a, b); }); }
};

// row(team, r) for the given rows, every lane of a `lanes`-thread team calling it for each row
// in turn, as a warp or block walks its rows on the device.
template <typename Row>
void rows_on_threads(const Row& row, const std::vector<int64_t>& rows, int lanes) {
  LaneBarrier barrier(lanes);
  std::vector<std::thread> threads;
  for (int lane = 0; lane < lanes; ++lane) {
    threads.emplace_back([&, lane] {
      for (int64_t r : rows) row(ThreadTeam{lane, lanes, &barrier}, r);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace pock::test
