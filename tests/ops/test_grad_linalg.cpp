// Finite-difference checks of the MatMul and Linear gradient rules: every transpose combination,
// broadcast batch dimensions, optional bias.
#include <catch2/catch.hpp>

#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

HostTensor uniform(Shape shape, uint32_t seed) {
  return HostTensor::f32(shape, random_floats(static_cast<size_t>(numel(shape)), seed));
}

Attrs transposes(int64_t a, int64_t b) { return Attrs{{"transpose_a", a}, {"transpose_b", b}}; }

// The stored shape of an operand whose last two dims are [rows, cols] after an optional transpose.
Shape operand(Shape batch, int64_t rows, int64_t cols, bool transposed) {
  batch.push_back(transposed ? cols : rows);
  batch.push_back(transposed ? rows : cols);
  return batch;
}

}  // namespace

TEST_CASE("MatMul gradients match finite differences for every transpose combination", "[grad][linalg]") {
  const int64_t m = 3, k = 4, n = 2;
  for (int64_t ta = 0; ta < 2; ++ta) {
    for (int64_t tb = 0; tb < 2; ++tb) {
      INFO("transpose_a " << ta << " transpose_b " << tb);
      const HostTensor a = uniform(operand({}, m, k, ta), 1 + ta);
      const HostTensor b = uniform(operand({}, k, n, tb), 3 + tb);
      CHECK(check_op_gradients("MatMul", {a, b}, transposes(ta, tb), {true, true}));
    }
  }
}

TEST_CASE("MatMul gradients sum over broadcast batch dimensions", "[grad][linalg]") {
  struct Case {
    Shape a_batch, b_batch;
  };
  for (const Case& c : {Case{{2}, {}}, Case{{}, {2}}, Case{{2, 1}, {3}}, Case{{2}, {2}}}) {
    for (int64_t ta = 0; ta < 2; ++ta) {
      const int64_t tb = 1 - ta;
      INFO("batches " << shape_str(c.a_batch) << " and " << shape_str(c.b_batch) << ", transpose_a " << ta);
      const HostTensor a = uniform(operand(c.a_batch, 2, 3, ta), 5);
      const HostTensor b = uniform(operand(c.b_batch, 3, 2, tb), 6);
      CHECK(check_op_gradients("MatMul", {a, b}, transposes(ta, tb), {true, true}));
    }
  }
}

TEST_CASE("Linear gradients match finite differences with and without bias", "[grad][linalg]") {
  const HostTensor w = uniform({3, 4}, 11);
  const HostTensor b = uniform({3}, 12);
  CHECK(check_op_gradients("Linear", {uniform({2, 4}, 13), w, b}, {}, {true, true, true}));
  CHECK(check_op_gradients("Linear", {uniform({2, 4}, 14), w}, {}, {true, true}));
  CHECK(check_op_gradients("Linear", {uniform({2, 3, 4}, 15), w, b}, {}, {true, true, true}));
  CHECK(check_op_gradients("Linear", {uniform({4}, 16), w, b}, {}, {true, true, true}));
  // Only the weight trains (a frozen input, e.g. the first layer).
  CHECK(check_op_gradients("Linear", {uniform({5, 4}, 17), w, b}, {}, {false, true, false}));
}
