// The cpu backend's NCHW <-> NHWC staging copies (kernels/cpu/layout.hpp): every kind of tile this
// machine can run (scalar, AVX2 8x8, AVX-512 masked 16x16) and the public functions, threaded,
// against plain index loops written here, on shapes that leave ragged tiles (channels and planes
// not multiples of 8 or 16, batch > 1), with the bias and activation that ride along.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/layout.hpp"

using namespace pock;
using namespace pock::cpu;
using layout_testing::Tiles;

namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);  // past relu6's 6, below its 0
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

float activate(float v, Activation a) {
  if (a == Activation::kNone || std::isnan(v)) return v;
  v = v < 0.0f ? 0.0f : v;
  return a == Activation::kRelu6 && v > 6.0f ? 6.0f : v;
}

struct Shape3 {
  int64_t batch, channels, plane;
};

// Ragged in both extents (1, 3, 9, 17, 33, 35, 49, 257) and whole tiles (16, 64), batch 1 to 3.
const Shape3 kShapes[] = {{1, 1, 1},  {2, 3, 35},  {1, 16, 16}, {3, 17, 49},
                          {2, 33, 9}, {1, 5, 64},  {2, 64, 33}, {2, 96, 257}};

const Tiles kTiles[] = {Tiles::kScalar, Tiles::kAvx2, Tiles::kAvx512};
const char* name_of(Tiles t) { return t == Tiles::kScalar ? "scalar" : t == Tiles::kAvx2 ? "avx2" : "avx512"; }

// x [n][c][p] -> y [n][p][c].
std::vector<float> naive_to_nhwc(const std::vector<float>& x, const Shape3& s) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c)
      for (int64_t p = 0; p < s.plane; ++p) {
        y[(n * s.plane + p) * s.channels + c] = x[(n * s.channels + c) * s.plane + p];
      }
  return y;
}

// x [n][p][c] -> y [n][c][p] = act(x + bias[c]).
std::vector<float> naive_to_nchw(const std::vector<float>& x, const float* bias, const Shape3& s, Activation a) {
  std::vector<float> y(x.size());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c)
      for (int64_t p = 0; p < s.plane; ++p) {
        const float v = x[(n * s.plane + p) * s.channels + c] + (bias ? bias[c] : 0.0f);
        y[(n * s.channels + c) * s.plane + p] = activate(v, a);
      }
  return y;
}

// Bit-for-bit: a copy plus one add and a clamp leaves no room for rounding differences; NaN == NaN.
void require_same(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i])) {
      REQUIRE(std::isnan(got[i]));
    } else {
      REQUIRE(got[i] == want[i]);
    }
  }
}

}  // namespace

TEST_CASE("cpu layout: every tile kind copies NCHW to NHWC like an index loop", "[cpu][layout]") {
  for (Tiles tiles : kTiles) {
    if (!layout_testing::available(tiles)) {
      WARN(std::string("skipped: this machine or build cannot run the ") + name_of(tiles) + " tiles");
      continue;
    }
    for (const Shape3& s : kShapes) {
      INFO(name_of(tiles) << " batch " << s.batch << " channels " << s.channels << " plane " << s.plane);
      const std::vector<float> x = random_values(static_cast<size_t>(s.batch * s.channels * s.plane), 7);
      std::vector<float> y(x.size(), -1.0f);
      layout_testing::nchw_to_nhwc_with(tiles, x.data(), y.data(), s.batch, s.channels, s.plane);
      require_same(y, naive_to_nhwc(x, s));
    }
  }
}

TEST_CASE("cpu layout: every tile kind copies NHWC to NCHW with the bias and activation", "[cpu][layout]") {
  for (Tiles tiles : kTiles) {
    if (!layout_testing::available(tiles)) {
      WARN(std::string("skipped: this machine or build cannot run the ") + name_of(tiles) + " tiles");
      continue;
    }
    for (const Shape3& s : kShapes) {
      for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kRelu6}) {
        for (bool with_bias : {false, true}) {
          INFO(name_of(tiles) << " batch " << s.batch << " channels " << s.channels << " plane " << s.plane
                              << " activation " << static_cast<int>(a) << " bias " << with_bias);
          std::vector<float> x = random_values(static_cast<size_t>(s.batch * s.channels * s.plane), 11);
          x[x.size() / 2] = std::numeric_limits<float>::quiet_NaN();  // passes through, as Relu lets it
          const std::vector<float> bias = random_values(static_cast<size_t>(s.channels), 13);
          const float* b = with_bias ? bias.data() : nullptr;
          std::vector<float> y(x.size(), -1.0f);
          layout_testing::nhwc_to_nchw_with(tiles, x.data(), b, y.data(), s.batch, s.channels, s.plane, a);
          require_same(y, naive_to_nchw(x, b, s, a));
        }
      }
    }
  }
}

TEST_CASE("cpu layout: the public copies, on two threads, match the index loops", "[cpu][layout]") {
  pthreadpool_t pool = thread_pool_for(2);
  for (const Shape3& s : kShapes) {
    INFO("batch " << s.batch << " channels " << s.channels << " plane " << s.plane);
    const std::vector<float> x = random_values(static_cast<size_t>(s.batch * s.channels * s.plane), 17);
    const std::vector<float> bias = random_values(static_cast<size_t>(s.channels), 19);
    std::vector<float> y(x.size(), -1.0f);
    nchw_to_nhwc(x.data(), y.data(), s.batch, s.channels, s.plane, pool);
    require_same(y, naive_to_nhwc(x, s));
    nhwc_to_nchw(x.data(), bias.data(), y.data(), s.batch, s.channels, s.plane, pool, Activation::kRelu6);
    require_same(y, naive_to_nchw(x, bias.data(), s, Activation::kRelu6));
  }
}
