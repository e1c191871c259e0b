// The cpu backend's ReduceSum, ReduceMean (and the sums at heart: ReduceSumSquare, ReduceL1,
// ReduceL2, ReduceLogSum) and MaxPool2d against the reference kernels on random
// shapes: backend_compare.hpp compiles each one-op case, checks the op was bound to the expected
// backend (so a kernel that silently stops accepting its pattern fails here) and compares outputs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

namespace {

// ReduceLogSum gets positive values, so that every sum has a logarithm.
OpCase reduce_case(const char* op, Shape x, Ints axes, int64_t keepdims, uint32_t seed) {
  const float lo = std::string(op) == "ReduceLogSum" ? 0.1f : -1.0f;
  OpCase c{op, {input(std::move(x), seed, lo)}};
  c.attrs.set("axes", std::move(axes));
  c.attrs.set("keepdims", keepdims);
  return c;
}

OpCase max_pool_case(Shape x, Ints kernel, Ints strides, Ints pads, bool ceil_mode, uint32_t seed) {
  OpCase c{"MaxPool2d", {input(std::move(x), seed)}};
  c.attrs.set("kernel", std::move(kernel));
  c.attrs.set("strides", std::move(strides));
  c.attrs.set("pads", std::move(pads));
  c.attrs.set("ceil_mode", int64_t{ceil_mode});
  return c;
}

}  // namespace

TEST_CASE("cpu ReduceSum, ReduceMean and the sum-like reductions match ref over contiguous axis patterns", "[ops][cpu]") {
  std::mt19937 gen(21);
  uint32_t seed = 2100;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum"}) {
    for (int trial = 0; trial < 3; ++trial) {
      const Shape x{random_dim(gen, 1, 5), random_dim(gen, 1, 13), random_dim(gen, 1, 9), random_dim(gen, 1, 11)};
      const std::vector<Ints> axis_sets = {
          {0, 2, 3},  // per-channel sums of [N, C, H, W] (frozen-BatchNorm gradients)
          {-1},       // last axis
          {2, 3},     // spatial: trailing block
          {0},        // leading axis
          {0, 1},     // leading block
          {},         // everything
          {3, 0, 2},  // the per-channel set again, unordered
      };
      for (const Ints& axes : axis_sets) {
        for (int64_t keepdims : {0, 1}) check_against_ref("cpu", reduce_case(op, x, axes, keepdims, ++seed));
      }
    }
    // A reduced axis between two kept ones of extent 1 is still one kept block.
    check_against_ref("cpu", reduce_case(op, {3, 1, 5, 1, 4}, {0, 1, 3}, 1, ++seed));
    // Large enough to be split over the thread pool, and once on one thread.
    check_against_ref("cpu", reduce_case(op, {8, 32, 17, 19}, {0, 2, 3}, 1, ++seed));
    check_against_ref("cpu", reduce_case(op, {8, 32, 17, 19}, {0, 2, 3}, 0, ++seed), "", 1);
    check_against_ref("cpu", reduce_case(op, {300, 257}, {0}, 0, ++seed));
  }
}

TEST_CASE("cpu ReduceSum leaves a reduced axis between kept ones to ref", "[ops][cpu]") {
  check_against_ref("cpu", reduce_case("ReduceSum", {3, 4, 5}, {1}, 1, 1), "ref");
  check_against_ref("cpu", reduce_case("ReduceMean", {2, 3, 4, 5}, {0, 2}, 0, 2), "ref");
  check_against_ref("cpu", reduce_case("ReduceL2", {2, 3, 4, 5}, {0, 2}, 0, 3), "ref");
}

TEST_CASE("cpu has no ReduceMin, ReduceProd or ReduceLogSumExp kernel: they run on ref", "[ops][cpu]") {
  for (const char* op : {"ReduceMin", "ReduceProd", "ReduceLogSumExp"}) check_against_ref("cpu", reduce_case(op, {3, 4}, {1}, 0, 4), "ref");
}

TEST_CASE("cpu MaxPool2d matches ref on strided, padded and ceil_mode windows", "[ops][cpu]") {
  // MaxPool2d has no dilation attribute in this IR, so dilated windows are not a case.
  std::mt19937 gen(22);
  uint32_t seed = 2200;
  for (int trial = 0; trial < 4; ++trial) {
    const Shape x{random_dim(gen, 1, 3), random_dim(gen, 1, 6), random_dim(gen, 4, 17), random_dim(gen, 4, 17)};
    check_against_ref("cpu", max_pool_case(x, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, ++seed));
    check_against_ref("cpu", max_pool_case(x, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, ++seed));  // ResNet's stem
    check_against_ref("cpu", max_pool_case(x, {3, 3}, {2, 2}, {1, 1, 1, 1}, true, ++seed));   // partial last window
    check_against_ref("cpu", max_pool_case(x, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, ++seed));  // stride 1
    check_against_ref("cpu", max_pool_case(x, {3, 2}, {1, 2}, {1, 0, 0, 1}, false, ++seed));  // asymmetric
    check_against_ref("cpu", max_pool_case(x, {4, 3}, {3, 2}, {2, 1, 0, 2}, true, ++seed));
    check_against_ref("cpu", max_pool_case(x, {x[2], x[3]}, {1, 1}, {0, 0, 0, 0}, false, ++seed));  // global
  }
  // Rows wider than the kernel's column buffer (512): the unclipped windows go in several chunks.
  check_against_ref("cpu", max_pool_case({1, 2, 5, 1100}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, ++seed));
  check_against_ref("cpu", max_pool_case({1, 2, 4, 1300}, {2, 5}, {1, 1}, {0, 2, 1, 2}, true, ++seed));
  // Many planes: split over the thread pool, and once on one thread.
  check_against_ref("cpu", max_pool_case({4, 64, 28, 28}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, ++seed));
  check_against_ref("cpu", max_pool_case({2, 16, 21, 21}, {3, 3}, {2, 2}, {1, 1, 1, 1}, true, ++seed), "", 1);
}
