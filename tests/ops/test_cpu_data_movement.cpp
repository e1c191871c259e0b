// The cpu backend's data-movement kernels (kernels/cpu/shape/data_movement.cpp) and general broadcasting
// binary ops (kernels/cpu/elementwise.cpp over strided_walk.hpp) against ref: random permutations,
// broadcasts and slices of random shapes, plus the transformer shapes they exist for. Each case
// also checks the op was bound to cpu, so a kernel that declines cannot pass by falling back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "support/backend_compare.hpp"

using namespace pock;
using namespace pock::test;

namespace {

void check_cpu(const OpCase& c, int num_threads = 0) { check_against_ref("cpu", c, "cpu", num_threads); }

OpCase transpose_case(const Shape& shape, const std::vector<int64_t>& perm, uint32_t seed) {
  OpCase c{"Transpose", {input(shape, seed)}, {}};
  c.attrs.set("perm", perm);
  return c;
}

Shape random_shape(std::mt19937& gen, int rank, int64_t hi) {
  Shape s;
  for (int d = 0; d < rank; ++d) s.push_back(random_dim(gen, 1, hi));
  return s;
}

}  // namespace

TEST_CASE("cpu Transpose matches ref on random permutations of ranks 2-6", "[ops][cpu]") {
  std::mt19937 gen(21);
  uint32_t seed = 2100;
  for (int rank = 2; rank <= 6; ++rank) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), gen);
      check_cpu(transpose_case(random_shape(gen, rank, rank <= 3 ? 37 : 7), perm, ++seed));
    }
  }
  // Attention's head split and merge, K^T (the input's innermost dim moves: tiled path), a plain
  // 2D transpose with edges that are not multiples of the tile, and the pool.
  check_cpu(transpose_case({2, 16, 3, 8}, {0, 2, 1, 3}, 1));
  check_cpu(transpose_case({2, 16, 3, 8}, {0, 2, 3, 1}, 2));
  check_cpu(transpose_case({37, 19}, {1, 0}, 3));
  check_cpu(transpose_case({8, 128, 12, 32}, {0, 2, 3, 1}, 4));
  check_cpu(transpose_case({8, 128, 12, 32}, {0, 2, 1, 3}, 5), 1);
  check_cpu(transpose_case({2, 5, 7, 3}, {0, 2, 3, 1}, 6));  // NCHW -> NHWC (layout.hpp's copies)
  check_cpu(transpose_case({2, 7, 3, 5}, {0, 3, 1, 2}, 7));  // and back
}

TEST_CASE("cpu Expand matches ref: leading, inner and repeated broadcasts", "[ops][cpu]") {
  auto expand_case = [](const Shape& in, const std::vector<int64_t>& shape, uint32_t seed) {
    OpCase c{"Expand", {input(in, seed)}, {}};
    c.attrs.set("shape", shape);
    return c;
  };
  check_cpu(expand_case({2, 3, 1, 5, 4}, {2, 3, 3, 5, 4}, 1));  // GQA: K/V heads repeated
  check_cpu(expand_case({3, 1}, {2, 3, 4}, 2));                 // a column, a new leading dim
  check_cpu(expand_case({1, 5}, {4, 5}, 3));                    // a row
  check_cpu(expand_case({1}, {6, 7}, 4));                       // a scalar
  check_cpu(expand_case({4, 1, 3, 1}, {4, 2, 3, 5}, 5));        // two broadcast dims apart
  check_cpu(expand_case({4, 3, 1, 128, 64}, {4, 3, 3, 128, 64}, 6));  // the pool
}

TEST_CASE("cpu Slice matches ref: axes, negative bounds, steps", "[ops][cpu]") {
  auto slice_case = [](const Shape& in, std::vector<int64_t> starts, std::vector<int64_t> ends,
                       std::vector<int64_t> axes, std::vector<int64_t> steps, uint32_t seed) {
    OpCase c{"Slice", {input(in, seed)}, {}};
    c.attrs.set("starts", starts);
    c.attrs.set("ends", ends);
    if (!axes.empty()) c.attrs.set("axes", axes);
    if (!steps.empty()) c.attrs.set("steps", steps);
    return c;
  };
  check_cpu(slice_case({2, 3, 5, 8}, {0}, {4}, {-1}, {}, 1));          // RoPE: first half of the last dim
  check_cpu(slice_case({2, 3, 5, 8}, {4}, {1LL << 40}, {3}, {}, 2));   // second half, "to the end"
  check_cpu(slice_case({7, 9}, {1, 8}, {6, 0}, {0, 1}, {2, -3}, 3));   // steps both ways
  check_cpu(slice_case({4, 6, 5}, {-3}, {-1}, {1}, {}, 4));            // negative bounds
  check_cpu(slice_case({5}, {4}, {-100}, {0}, {-1}, 5));               // reversed
  check_cpu(slice_case({4, 128, 9, 64}, {32}, {64}, {3}, {}, 6));      // the pool
}

TEST_CASE("cpu Add/Sub/Mul/Div match ref on any broadcast", "[ops][cpu]") {
  // Attention masks ([N,1,1,S] over [N,H,S,S]), both operands broadcasting, a broadcast dim inside
  // a block (strided), random shapes with random size-1 dims, both orders, one thread and the pool.
  check_cpu({"Add", {input({2, 3, 5, 5}, 1), input({2, 1, 1, 5}, 2)}});
  check_cpu({"Add", {input({3, 1, 5}, 3), input({1, 4, 5}, 4)}});
  check_cpu({"Mul", {input({2, 3, 4}, 5), input({2, 1, 4}, 6)}});
  check_cpu({"Sub", {input({2, 1, 4}, 7), input({2, 3, 4}, 8)}});
  check_cpu({"Div", {input({3, 1}, 9), input({1, 4}, 10, 0.5f, 2.0f)}});
  std::mt19937 gen(31);
  uint32_t seed = 3100;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    const float lo = std::string(op) == "Div" ? 0.5f : -1.0f;
    for (int trial = 0; trial < 4; ++trial) {
      const Shape out = random_shape(gen, 4, 6);
      Shape a = out, b = out;
      for (size_t d = 0; d < out.size(); ++d) {
        if (gen() % 3 == 0) a[d] = 1;
        else if (gen() % 3 == 0) b[d] = 1;
      }
      check_cpu({op, {input(a, ++seed), input(b, ++seed, lo, 2.0f)}});
    }
  }
  check_cpu({"Add", {input({8, 12, 128, 128}, 11), input({8, 1, 1, 128}, 12)}});
  check_cpu({"Add", {input({8, 12, 128, 128}, 13), input({8, 1, 1, 128}, 14)}}, 1);
}
