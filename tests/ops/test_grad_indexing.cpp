// indexing family gradients, end to end (autodiff, compile, run) against finite differences
// (support/grad_check.hpp).
#include <catch2/catch.hpp>

#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

TEST_CASE("TopK gradients match finite differences", "[ops][grad][indexing][fd]") {
  // Entries 0.1 apart, farther than the difference step from a tie.
  const HostTensor x = HostTensor::f32({3, 4}, {0.3f, -0.5f, 0.9f, 0.1f, -0.2f, 0.6f, 0.0f, -0.9f, 0.5f, 0.2f, -0.4f, 0.8f});
  for (int64_t largest : {0, 1}) {
    DYNAMIC_SECTION("largest " << largest) {
      CHECK(check_op_gradients("TopK", {x}, Attrs{{"k", int64_t{2}}, {"axis", int64_t{0}}, {"largest", largest}}, {true}));
      CHECK(check_op_gradients("TopK", {x}, Attrs{{"k", int64_t{3}}, {"axis", int64_t{-1}}, {"largest", largest}}, {true}));
    }
  }
}

TEST_CASE("ReverseSequence gradients match finite differences", "[ops][grad][indexing][fd]") {
  CHECK(check_op_gradients("ReverseSequence", {HostTensor::f32({3, 4, 2}, random_floats(24, 3)), HostTensor::i64({4}, {3, 0, 2, 1})},
                           Attrs{{"batch_axis", int64_t{1}}, {"time_axis", int64_t{0}}}, {true, false}));
}
