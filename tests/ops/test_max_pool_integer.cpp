// MaxPool2d on the 8-bit integers ONNX's MaxPool takes (uint8, int8): hand values with padding
// (never the maximum: pads stay below the kernel) and ceil_mode, the extremes of each dtype, and
// AvgPool2d still refusing integers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

TEST_CASE("MaxPool2d on uint8 keeps 0 and 255 exact, padding and ceil_mode included", "[ops][conv]") {
  // [3, 4] with pads (1, 1, 0, 0), kernel 2, stride 2: window rows {-1, 0} / {1, 2}, columns
  // {-1, 0} / {1, 2} / {3} (ceil_mode keeps the last, cut short); the padding is left out, so a
  // window of one 0 gives 0.
  const HostTensor x = HostTensor::make<uint8_t>(DType::kU8, {1, 1, 3, 4}, {0, 255, 7, 4, 0, 3, 9, 8, 200, 1, 2, 6});
  auto out = run_op("MaxPool2d", {x},
                    Attrs{{"kernel", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}, {"ceil_mode", int64_t{1}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].dtype == DType::kU8);
  CHECK(out.value()[0].shape == Shape{1, 1, 2, 3});
  CHECK(out.value()[0].values<uint8_t>() == std::vector<uint8_t>{0, 255, 4, 200, 9, 8});
}

TEST_CASE("MaxPool2d on int8 takes the largest negative value of an all-negative window", "[ops][conv]") {
  const HostTensor x = HostTensor::make<int8_t>(DType::kI8, {1, 2, 2, 2}, {-128, -7, -90, -100, 127, -128, 5, -1});
  auto out = run_op("MaxPool2d", {x}, Attrs{{"kernel", Ints{2, 2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].values<int8_t>() == std::vector<int8_t>{-7, 127});
}

TEST_CASE("AvgPool2d refuses integer input by name", "[ops][conv][errors]") {
  const HostTensor x = HostTensor::make<uint8_t>(DType::kU8, {1, 1, 2, 2}, {1, 2, 3, 4});
  auto out = run_op("AvgPool2d", {x}, Attrs{{"kernel", Ints{2, 2}}});
  REQUIRE_FALSE(out.is_ok());
  CHECK_THAT(out.status().message(), Catch::Contains("must be a float tensor, got u8"));
}
