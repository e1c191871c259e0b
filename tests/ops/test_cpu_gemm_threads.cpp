// The cpu GEMMs split over the backend's thread pool (kernels/cpu/parallel_sgemm.hpp) against ref,
// at two threads: shapes large enough to be split, along rows (tall outputs) and along columns
// (wide ones), with sides that are not multiples of the 16-wide parts (the last part is ragged),
// both transposes, batched products spread one per thread, and the convolutions that call it.
// The other cpu GEMM tests use shapes below the split threshold, so they cover the unsplit call.
#include <catch2/catch.hpp>
#include <string>

#include "support/backend_compare.hpp"
#include "support/backward_cases.hpp"

using namespace pock;
using namespace pock::test;

#ifdef POCK_HAVE_OPENBLAS
namespace {

constexpr int kThreads = 2;

void check(const OpCase& c) { check_against_ref("cpu", c, "cpu", kThreads); }

}  // namespace

TEST_CASE("cpu MatMul split over two threads matches ref", "[ops][cpu][threads]") {
  uint32_t seed = 7100;
  // {m, n, k}: tall (rows split, 203 = 6 parts of 16 + a ragged 11 in the second half), wide
  // (columns split), square, and one just below the split threshold.
  const int64_t shapes[][3] = {{203, 77, 150}, {45, 517, 96}, {128, 128, 64}, {60, 60, 100}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    for (int64_t ta : {0, 1}) {
      for (int64_t tb : {0, 1}) {
        const Attrs attrs{{"transpose_a", ta}, {"transpose_b", tb}};
        const Shape a = ta ? Shape{k, m} : Shape{m, k};
        const Shape b = tb ? Shape{n, k} : Shape{k, n};
        check({"MatMul", {input(a, ++seed), input(b, ++seed)}, attrs});
        // Batches: three products (one per thread, ragged) and one product of a batch of one.
        check({"MatMul", {input({3, a[0], a[1]}, ++seed), input({3, b[0], b[1]}, ++seed)}, attrs});
        check({"MatMul", {input({1, a[0], a[1]}, ++seed), input(b, ++seed)}, attrs});
      }
    }
  }
}

TEST_CASE("cpu Linear and its gradients split over two threads match ref", "[ops][cpu][threads]") {
  uint32_t seed = 7200;
  const int64_t shapes[][3] = {{300, 70, 90}, {40, 333, 120}, {257, 129, 65}};  // {rows, n, k}
  for (const auto& s : shapes) {
    const int64_t rows = s[0], n = s[1], k = s[2];
    check({"Linear", {input({rows, k}, ++seed), input({n, k}, ++seed), input({n}, ++seed)}});
    check({"Linear", {input({2, rows, k}, ++seed), frozen({n, k}, ++seed), omitted()}});
    check({"LinearInputGrad", {input({rows, n}, ++seed), input({n, k}, ++seed)}});
    check({"LinearWeightGrad", {input({rows, n}, ++seed), input({rows, k}, ++seed)}});
    check({"LinearWeightGrad", {input({3, rows, n}, ++seed), input({3, rows, k}, ++seed)}});
  }
}

TEST_CASE("cpu GEMMs with a short reduction (the direct tiles) split over two threads match ref",
          "[ops][cpu][threads]") {
  // K <= 64 without a bias or a transposed b runs short_product.hpp's tiles, split by columns: a
  // classifier head's weight gradient at batch 8 (K = 8; 700 columns, ragged after 43 tiles), its
  // input gradient from 40 classes, and MatMuls with either a transposed.
  uint32_t seed = 7250;
  check({"LinearWeightGrad", {input({8, 301}, ++seed), input({8, 700}, ++seed)}});
  check({"LinearWeightGrad", {input({2, 4, 301}, ++seed), input({2, 4, 700}, ++seed)}});
  check({"LinearInputGrad", {input({50, 40}, ++seed), input({40, 203}, ++seed)}});
  for (int64_t ta : {0, 1}) {
    const Attrs attrs{{"transpose_a", ta}, {"transpose_b", int64_t{0}}};
    check({"MatMul", {input(ta ? Shape{64, 37} : Shape{37, 64}, ++seed), input({64, 150}, ++seed)}, attrs});
  }
}

TEST_CASE("cpu GEMM convolutions split over two threads match ref", "[ops][cpu][threads]") {
  uint32_t seed = 7300;
  // {batch, channels, h, w, out, kh, kw, groups, strides, pads, dilations}: a 3x3 convolution
  // (im2col, col2im), a 1x1 one on a wide plane (one GEMM per image), one batched over images,
  // and unfolded ones batched over images (planes of 8x8 and less: pointwise_batch.hpp's
  // use_batched_unfold): 3x3 on a 4x4 plane (ResNet-18's layer4), strided, dilated, 64 pixels.
  const ConvShape shapes[] = {{2, 24, 20, 20, 40, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
                              {2, 48, 24, 24, 72, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
                              {8, 96, 6, 6, 120, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
                              {8, 64, 4, 4, 72, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
                              {4, 24, 9, 9, 40, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}},
                              {2, 16, 8, 8, 24, 3, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}},
                              {3, 8, 5, 7, 12, 2, 3, 1, {1, 1}, {0, 1, 1, 0}, {1, 1}},
                              // Taps that read only padding (ONNX's Conv1d_pad2size1): 1x5 over one pixel.
                              {1, 4, 1, 1, 4, 1, 5, 1, {1, 1}, {0, 2, 0, 2}, {1, 1}},
                              {2, 4, 1, 1, 4, 1, 5, 1, {1, 1}, {0, 2, 0, 2}, {1, 1}}};
  for (const ConvShape& s : shapes) {
    OpCase fwd{"Conv2d", {input(s.x(), ++seed), input(s.w(), ++seed), input({s.out_channels}, ++seed)}, s.attrs()};
    check(fwd);
    check(grad_input_case(s, false, ++seed));
    check(grad_weight_case(s, 0, ++seed));
    check(grad_weight_case(s, (s.out_channels + 1) / 2, ++seed));  // partial channels
    check_against_ref("cpu", grad_input_case(s, false, ++seed), "cpu", 1);  // one thread: same batched form
  }
}
#else
TEST_CASE("cpu GEMMs split over threads need OpenBLAS", "[ops][cpu][threads]") {
  WARN("skipped: this build has no OpenBLAS, so no cpu GEMM kernel to split");
}
#endif
