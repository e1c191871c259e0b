// splitmix64 (Steele, Lea, Flood 2014): the generator behind every seeded stream of the project
// (initial weights, dropout masks, shuffles, sampling). Tiny, well mixed, and the same values on
// every platform, which the standard library's distributions are not.
#pragma once
#include <cstdint>

namespace pock {

constexpr uint64_t kSplitmixGamma = 0x9E3779B97F4A7C15ull;

// The mix of one counter value: a bijective hash, for counter-based streams.
inline uint64_t splitmix64(uint64_t x) {
  x += kSplitmixGamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The next value of the sequential stream whose state is `state`.
inline uint64_t splitmix64_next(uint64_t& state) {
  const uint64_t out = splitmix64(state);
  state += kSplitmixGamma;
  return out;
}

// Uniform in [0, 1) from the top 53 bits.
inline double unit_interval(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace pock
