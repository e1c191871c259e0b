// Shape family gradients: the SliceGrad kernel against a scatter written here, and every rule end
// to end (autodiff, compile, run) against finite differences (support/grad_check.hpp).
#include <catch2/catch.hpp>
#include <cstdint>

#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

TEST_CASE("SliceGrad scatters dy to starts + i * steps in zeros", "[ops][grad][shape]") {
  // dx [3, 5]: rows 2, 0 (start 2, step -2), columns 1, 4 (start 1, step 3).
  const HostTensor dy = HostTensor::f32({2, 2}, {1, 2, 3, 4});
  auto out = run_op("SliceGrad", {dy}, Attrs{{"starts", Ints{2, 1}}, {"steps", Ints{-2, 3}}, {"shape", Ints{3, 5}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{0, 3, 0, 0, 4, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2});
}

TEST_CASE("SliceGrad matches a scatter on random shapes", "[ops][grad][shape]") {
  const Shape shape{4, 3, 6};
  const Ints starts{1, 2, 5}, steps{2, -1, -2};
  const Shape dy_shape{2, 3, 3};
  const std::vector<float> dy = random_floats(numel(dy_shape), 5);
  std::vector<double> want(static_cast<size_t>(numel(shape)), 0.0);
  for (int64_t i = 0; i < dy_shape[0]; ++i)
    for (int64_t j = 0; j < dy_shape[1]; ++j)
      for (int64_t k = 0; k < dy_shape[2]; ++k) {
        const int64_t a = starts[0] + i * steps[0], b = starts[1] + j * steps[1], c = starts[2] + k * steps[2];
        want[static_cast<size_t>((a * shape[1] + b) * shape[2] + c)] =
            dy[static_cast<size_t>((i * dy_shape[1] + j) * dy_shape[2] + k)];
      }
  auto out = run_op("SliceGrad", {HostTensor::f32(dy_shape, dy)},
                    Attrs{{"starts", starts}, {"steps", steps}, {"shape", shape}});
  REQUIRE(out.is_ok());
  CHECK(mismatches(out.value()[0].f32(), want) == "");
}

TEST_CASE("SliceGrad rejects positions outside the shape", "[ops][grad][shape]") {
  auto out = run_op("SliceGrad", {HostTensor::f32({3}, {1, 2, 3})},
                    Attrs{{"starts", Ints{1}}, {"steps", Ints{2}}, {"shape", Ints{5}}});
  CHECK(out.status().code() == Code::kShapeMismatch);
}

namespace {

HostTensor random_tensor(Shape shape, uint32_t seed) {
  return HostTensor::f32(shape, random_floats(numel(shape), seed));
}

void check_one(const std::string& op, Shape shape, const Attrs& attrs, uint32_t seed) {
  INFO(op << " x " << shape_str(shape));
  CHECK(check_op_gradients(op, {random_tensor(std::move(shape), seed)}, attrs, {true}));
}

}  // namespace

TEST_CASE("Reshape-like gradients match finite differences", "[ops][grad][shape][fd]") {
  check_one("Reshape", {2, 3, 4}, Attrs{{"shape", Ints{4, -1}}}, 1);
  check_one("Reshape", {2, 3, 4}, Attrs{{"shape", Ints{0, 12}}}, 2);
  check_one("Flatten", {2, 3, 2, 2}, Attrs{{"axis", int64_t{2}}}, 3);
  check_one("Squeeze", {2, 1, 3, 1}, Attrs{{"axes", Ints{1, -1}}}, 4);
  check_one("Squeeze", {1, 3, 1}, {}, 5);
  check_one("Unsqueeze", {2, 3}, Attrs{{"axes", Ints{0, -1}}}, 6);
}

TEST_CASE("Transpose gradients match finite differences", "[ops][grad][shape][fd]") {
  check_one("Transpose", {2, 3, 4}, Attrs{{"perm", Ints{1, 2, 0}}}, 11);
  check_one("Transpose", {2, 3, 4, 2}, Attrs{{"perm", Ints{3, 0, 2, 1}}}, 12);
  check_one("Transpose", {2, 3, 4}, {}, 13);  // absent perm reverses
}

TEST_CASE("Concat and Split gradients match finite differences", "[ops][grad][shape][fd]") {
  SECTION("Concat of three inputs along a negative axis") {
    CHECK(check_op_gradients("Concat",
                             {random_tensor({2, 1, 3}, 21), random_tensor({2, 4, 3}, 22), random_tensor({2, 2, 3}, 23)},
                             Attrs{{"axis", int64_t{-2}}}, {true, true, true}));
  }
  SECTION("Concat with one input not differentiated") {
    CHECK(check_op_gradients("Concat", {random_tensor({3, 2}, 24), random_tensor({3, 5}, 25)},
                             Attrs{{"axis", int64_t{1}}}, {false, true}));
  }
  SECTION("Split with every piece used") {
    CHECK(check_op_gradients("Split", {random_tensor({2, 7}, 26)},
                             Attrs{{"axis", int64_t{1}}, {"split", Ints{2, 4, 1}}}, {true}));
  }
  SECTION("Split with a piece that carries no gradient") {
    GradCheckOptions o;
    o.loss_outputs = {0, 2};
    CHECK(check_op_gradients("Split", {random_tensor({6, 2}, 27)},
                             Attrs{{"axis", int64_t{0}}, {"split", Ints{1, 3, 2}}}, {true}, o));
  }
}

TEST_CASE("Slice gradients match finite differences", "[ops][grad][shape][fd]") {
  const Shape shape{5, 4, 6};
  check_one("Slice", shape, Attrs{{"starts", Ints{1}}, {"ends", Ints{4}}, {"axes", Ints{0}}}, 31);
  check_one("Slice", shape,
            Attrs{{"starts", Ints{0, 5}}, {"ends", Ints{3, 0}}, {"axes", Ints{1, 2}}, {"steps", Ints{2, -2}}}, 32);
  // Negative and far-out-of-range bounds clamp (ONNX): the whole axis, walked backwards.
  check_one("Slice", shape,
            Attrs{{"starts", Ints{-1}}, {"ends", Ints{INT64_MIN}}, {"axes", Ints{-1}}, {"steps", Ints{-1}}}, 33);
  check_one("Slice", shape,
            Attrs{{"starts", Ints{-4, 1}}, {"ends", Ints{1000, -1}}, {"axes", Ints{0, 1}}, {"steps", Ints{3, 1}}}, 34);
}

TEST_CASE("Expand and Pad gradients match finite differences", "[ops][grad][shape][fd]") {
  check_one("Expand", {3, 1}, Attrs{{"shape", Ints{2, 3, 4}}}, 41);
  check_one("Expand", {1, 4}, Attrs{{"shape", Ints{3, 1}}}, 42);
  check_one("Pad", {2, 3}, Attrs{{"pads", Ints{1, 0, 2, 3}}, {"value", 0.5}}, 43);
  check_one("Pad", {4, 5}, Attrs{{"pads", Ints{-1, 2, 1, -2}}}, 44);  // negative pads crop
}

TEST_CASE("Trilu gradients match finite differences", "[ops][grad][shape][fd]") {
  check_one("Trilu", {2, 3, 4}, Attrs{{"upper", int64_t{1}}, {"k", int64_t{-1}}}, 51);
  check_one("Trilu", {4, 3}, Attrs{{"upper", int64_t{0}}, {"k", int64_t{1}}}, 52);
  // k as an i64 input, which gets no gradient.
  CHECK(check_op_gradients("Trilu", {random_tensor({3, 4}, 53), HostTensor::i64({}, {1})}, Attrs{{"upper", int64_t{1}}}, {true, false}));
}
