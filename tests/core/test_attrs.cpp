// Attrs reads an integer attribute stored as a float by truncating it. A value beyond int64's
// range, or NaN (a hostile blob can hold either where an int belongs), saturates instead of
// converting through undefined behaviour (fuzz finding: blob_step, float-attr-read-as-int-out-of-range).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "pock/types.hpp"

using namespace pock;

TEST_CASE("Attrs::get_int truncates a float and saturates one out of int64's range", "[core][attrs]") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  Attrs a;
  a.set("x", 3.9);
  a.set("y", -3.9);
  a.set("huge", 1e300);
  a.set("tiny", -3.65565e161);
  a.set("nan", std::nan(""));
  a.set("edge", 9223372036854775808.0);  // 2^63
  a.set("int", int64_t{7});
  CHECK(a.get_int("x", 0) == 3);
  CHECK(a.get_int("y", 0) == -3);
  CHECK(a.get_int("huge", 0) == kMax);
  CHECK(a.get_int("tiny", 0) == kMin);
  CHECK(a.get_int("nan", 0) == kMin);
  CHECK(a.get_int("edge", 0) == kMax);
  CHECK(a.get_int("int", 0) == 7);
  CHECK(a.get_int("absent", 5) == 5);
}
