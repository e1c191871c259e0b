// The host scan behind the after-step parameter check (runtime/finite_check.hpp): a NaN or an
// infinity anywhere in a buffer, at any offset from a vector boundary, is found; every finite
// float (the largest, denormals, negative zero) passes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/finite_check.hpp"

using pock::host_floats_finite;

namespace {

const float kNonFinite[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};

}  // namespace

TEST_CASE("host finite scan: every finite float passes, whatever the length") {
  const float finite[] = {0.0f,
                          -0.0f,
                          1.0f,
                          -3.5f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min()};
  for (size_t n = 0; n <= 70; ++n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = finite[i % std::size(finite)];
    CHECK(host_floats_finite(v.data(), n));
  }
}

TEST_CASE("host finite scan: one NaN or infinity at any position fails the buffer") {
  // 70 elements: more than four 16-lane vectors, so every lane of the vector loop and every
  // position of the scalar tail is tried.
  for (float bad : kNonFinite) {
    for (size_t at = 0; at < 70; ++at) {
      std::vector<float> v(70, 2.0f);
      v[at] = bad;
      INFO("value " << bad << " at " << at);
      CHECK_FALSE(host_floats_finite(v.data(), v.size()));
      // The element just past the scanned range is not read.
      CHECK(host_floats_finite(v.data(), at));
    }
  }
}

TEST_CASE("host bounded scan: |v| above the limit, NaN or Inf at any position fails the buffer") {
  const float limit = 1e15f;
  const float within[] = {0.0f, -0.0f, 1.0f, limit, -limit, std::numeric_limits<float>::denorm_min()};
  const float beyond[] = {std::nextafter(limit, 2 * limit), -std::nextafter(limit, 2 * limit), 1e30f,
                          std::numeric_limits<float>::max()};
  for (size_t n = 0; n <= 70; ++n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = within[i % std::size(within)];
    CHECK(pock::host_floats_bounded(v.data(), n, limit));
  }
  std::vector<float> bad_values(std::begin(beyond), std::end(beyond));
  bad_values.insert(bad_values.end(), std::begin(kNonFinite), std::end(kNonFinite));
  for (float bad : bad_values) {
    for (size_t at = 0; at < 70; ++at) {
      std::vector<float> v(70, -limit);
      v[at] = bad;
      INFO("value " << bad << " at " << at);
      CHECK_FALSE(pock::host_floats_bounded(v.data(), v.size(), limit));
      CHECK(pock::host_floats_bounded(v.data(), at, limit));
    }
  }
}
