// Which matrices a batched cuda MatMul pairs (kernels/cuda/matmul_batch.hpp): numpy broadcasting
// of the batch dims, aligned on the right, as ref's MatMul walks them; and when fixed strides
// can say it (cublasGemmStridedBatchedEx) rather than pointer lists.
#include <catch2/catch.hpp>

#include <vector>

#include "kernels/cuda/matmul_batch.hpp"

using namespace pock::cuda;

namespace {

pock_tensor_desc dims(std::initializer_list<int64_t> d) {
  pock_tensor_desc t{};
  t.rank = static_cast<int32_t>(d.size());
  int i = 0;
  for (int64_t v : d) t.dims[i++] = v;
  return t;
}

}  // namespace

TEST_CASE("equal batches advance together, a single matrix repeats with stride 0", "[cuda_logic]") {
  const MatrixBatch same = matrix_batch(dims({4, 2, 3}), dims({4, 3, 5}), dims({4, 2, 5}));
  CHECK(same.count == 4);
  CHECK(same.strided);
  CHECK(same.stride_a);
  CHECK(same.stride_b);
  const MatrixBatch shared_b = matrix_batch(dims({2, 3, 2, 3}), dims({3, 5}), dims({2, 3, 2, 5}));
  CHECK(shared_b.count == 6);
  CHECK(shared_b.strided);
  CHECK(shared_b.stride_a);
  CHECK_FALSE(shared_b.stride_b);
  CHECK(shared_b.b_index == std::vector<int64_t>(6, 0));
}

TEST_CASE("crossed broadcasts pair every matrix of A with every matrix of B", "[cuda_logic]") {
  // a [2, 1, m, k] and b [3, k, n] -> y [2, 3, m, n]: output (i, j) = a[i] b[j].
  const MatrixBatch m = matrix_batch(dims({2, 1, 4, 5}), dims({3, 5, 6}), dims({2, 3, 4, 6}));
  CHECK(m.count == 6);
  CHECK_FALSE(m.strided);
  CHECK(m.a_index == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(m.b_index == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  // b [2, 1, k, n] broadcast along the middle dim of y [2, 3, m, n].
  const MatrixBatch middle = matrix_batch(dims({2, 3, 4, 5}), dims({2, 1, 5, 6}), dims({2, 3, 4, 6}));
  CHECK(middle.b_index == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(middle.a_index == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK_FALSE(middle.strided);
}
