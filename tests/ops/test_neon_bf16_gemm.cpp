// The neon backend's bf16 GEMMs (compute "bf16": MatMul, Linear, LinearInputGrad,
// LinearWeightGrad through ARMv8.6-A BFMMLA, kernels/neon/bf16_gemm.hpp) against ref, which
// rounds the same operands to bf16 and sums in double:
//   - shapes with tails in every direction (rows, columns, a partial block of K), all four
//     transposes, broadcast batches, bf16 operands, frozen weights, bias and activations, within
//     the default 1e-4 of (|ref| + 1): f32 sums differ from ref's by ~1e-6 on these values, a
//     kernel that did not round by ~1e-3 (checked), a mixed-up row or column by O(1);
//   - denormal operands, which BFMMLA reads as 0, as every kernel does under a run's flush-to-zero:
//     the result must be the product of the flushed operands, computed here in double;
//   - no heap allocation in a run (the panels live in the engine's scratch);
//   - the fallback: without BF16 (POCK_BF16_ISA=fp32) and for f32 GEMMs neon takes nothing.
// Where the CPU lacks BF16 the comparisons say SKIPPED. Only aarch64 builds have the backend: run
// through scripts/test-aarch64.sh (qemu-aarch64 -cpu max, which reports BF16; QEMU_CPU=cortex-a72
// shows the skip).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/bf16_round.h"
#include "support/backend_compare.hpp"

using namespace pock;
using namespace pock::test;

#ifndef POCK_HAVE_NEON

TEST_CASE("neon bf16 GEMMs exist only in aarch64 builds", "[ops][neon][bf16]") {
  WARN("SKIPPED: not an aarch64 build (the neon tests run through scripts/test-aarch64.sh)");
}

#else
#include "kernels/neon/bf16_gemm.hpp"
#include "support/counting_malloc.hpp"

namespace {

Attrs bf16(int64_t ta = 0, int64_t tb = 0) {
  return {{"compute", std::string("bf16")}, {"transpose_a", ta}, {"transpose_b", tb}};
}

Attrs bf16_activation(const char* activation) {
  return {{"compute", std::string("bf16")}, {"activation", std::string(activation)}};
}

using MakeOperand = Operand (*)(Shape, uint32_t, float, float);

// The GEMMs of a transformer layer and of attention, with odd extents: every panel has padding
// rows and a partial block of K. `activation` makes the activations f32 or bf16 tensors.
std::vector<OpCase> layer_cases(MakeOperand activation) {
  uint32_t seed = 500;
  const int64_t rows = 13, n = 11, k = 30;
  auto act = [&](Shape shape) { return activation(std::move(shape), ++seed, -1.0f, 1.0f); };
  std::vector<OpCase> out = {
      {"Linear", {act({rows, k}), input({n, k}, ++seed), input({n}, ++seed)}, bf16_activation("relu")},
      {"Linear", {act({2, rows, k}), frozen({n, k}, ++seed), omitted()}, bf16()},
      {"Linear", {act({70, 100}), frozen({37, 100}, ++seed), input({37}, ++seed)}, bf16_activation("relu6")},
      {"LinearInputGrad", {act({rows, n}), input({n, k}, ++seed)}, bf16()},
      {"LinearInputGrad", {act({2, rows, n}), frozen({n, k}, ++seed)}, bf16()},
      {"LinearWeightGrad", {act({2, rows, n}), act({2, rows, k})}, bf16()},
  };
  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      const Shape a = ta ? Shape{3, k, rows} : Shape{3, rows, k}, b = tb ? Shape{n, k} : Shape{k, n};
      const Shape b3 = tb ? Shape{3, n, k} : Shape{3, k, n};
      out.push_back({"MatMul", {act(a), act(b3)}, bf16(ta, tb)});
      out.push_back({"MatMul", {act(a), input(b, ++seed)}, bf16(ta, tb)});
    }
  }
  return out;
}

// Extents at and around the tile (4 x 8, K in blocks of 4), and batch broadcasting.
std::vector<OpCase> edge_cases() {
  uint32_t seed = 700;
  auto in = [&](Shape shape) { return input(std::move(shape), ++seed); };
  return {
      {"MatMul", {in({8, 16}), in({16, 16})}, bf16()},            // whole tiles only
      {"MatMul", {in({1, 1}), in({1, 1})}, bf16()},               // one value of each
      {"MatMul", {in({5, 3}), in({3, 9})}, bf16()},               // K below one block
      {"MatMul", {in({2, 1, 5, 6}), in({3, 6, 7})}, bf16()},      // both batches broadcast
      {"MatMul", {in({5, 6}), in({2, 6, 7})}, bf16(0, 0)},        // one a for a batch of b
      {"MatMul", {in({2, 6, 5}), in({6, 7})}, bf16(1, 0)},        // a transposed, one b
      {"Linear", {in({9}), in({4, 9}), in({4})}, bf16()},         // x of rank 1
      {"LinearWeightGrad", {in({3, 1, 17}), in({3, 1, 2})}, bf16()},
  };
}

struct ForcedIsa {
  explicit ForcedIsa(const char* isa) { setenv("POCK_BF16_ISA", isa, 1); }
  ~ForcedIsa() { unsetenv("POCK_BF16_ISA"); }
};

bool skipped() {
  if (neon::bf16_gemm_available()) return false;
  WARN("SKIPPED: this CPU does not report BF16 (or POCK_BF16_ISA=fp32): the bf16 GEMMs stay off neon");
  return true;
}

// ---- denormal operands --------------------------------------------------------------------

constexpr float kDenormal = 0x1p-130f;  // a bf16 denormal, exactly
constexpr float kHuge = 0x1p127f;       // with it, a product of 2^-3: far above the tolerance

// The largest f32 denormal: rounded to bf16 it becomes 2^-126, a normal value that nothing flushes.
float largest_f32_denormal() {
  const uint32_t bits = 0x007fffffu;
  float v = 0.0f;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// A product y[m, n] = sum_d a(i, d) b(d, j) with b [depth, n] row-major and a [m, depth] (or
// [depth, m], transposed), whose depth index 0 pairs denormals of a with kHuge in b; a's first
// value there rounds up to a normal bf16 instead (a product of 2).
struct DenormalCase {
  OpCase op;
  int64_t m, n, depth;
  bool transpose_a;
};

DenormalCase planted(OpCase op, int64_t m, int64_t n, int64_t depth, bool transpose_a) {
  std::vector<float>& a = op.inputs[0].values;
  for (int64_t i = 0; i < m; ++i) a[static_cast<size_t>(transpose_a ? i : i * depth)] = kDenormal;
  a[0] = largest_f32_denormal();
  for (int64_t j = 0; j < n; ++j) op.inputs[1].values[static_cast<size_t>(j)] = kHuge;
  return {std::move(op), m, n, depth, transpose_a};
}

// An f32 operand as a bf16 tensor (its values rounded as ref rounds them).
void make_bf16(Operand& o) {
  o.dtype = DType::kBF16;
  o.bytes.clear();
  for (float& v : o.values) {
    const uint16_t h = pock_f32_to_bf16(v);
    v = pock_bf16_to_f32(h);
    o.bytes.push_back(static_cast<uint8_t>(h));
    o.bytes.push_back(static_cast<uint8_t>(h >> 8));
  }
}

std::vector<DenormalCase> denormal_cases() {
  const int64_t m = 5, n = 9, k = 12;
  DenormalCase matmul = planted({"MatMul", {input({m, k}, 801), input({k, n}, 802)}, bf16()}, m, n, k, false);
  DenormalCase bf16_a = matmul;
  make_bf16(bf16_a.op.inputs[0]);
  // dw = dyᵀ x: the depth is the rows of dy [k, m] and x [k, n].
  DenormalCase weight_grad = planted({"LinearWeightGrad", {input({k, m}, 803), input({k, n}, 804)}, bf16()}, m, n, k, true);
  return {matmul, bf16_a, weight_grad};
}

// The case's result in double, here on the test's thread with IEEE denormals: operands rounded to
// bf16 (kernels/bf16_round.h), those that round to a denormal kept or set to 0.
std::vector<float> in_double(const DenormalCase& c, bool flush) {
  auto operand = [&](float v) {
    const float b = pock_round_bf16(v);
    return flush && b != 0.0f && std::fabs(b) < 0x1p-126f ? 0.0 : static_cast<double>(b);
  };
  const std::vector<float>&a = c.op.inputs[0].values, &b = c.op.inputs[1].values;
  std::vector<float> y;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0;
      for (int64_t d = 0; d < c.depth; ++d) {
        const float av = a[static_cast<size_t>(c.transpose_a ? d * c.m + i : i * c.depth + d)];
        sum += operand(av) * operand(b[static_cast<size_t>(d * c.n + j)]);
      }
      y.push_back(static_cast<float>(sum));
    }
  }
  return y;
}

}  // namespace

TEST_CASE("neon bf16 GEMMs match ref where the CPU has BF16", "[ops][neon][bf16]") {
  if (skipped()) return;
  for (const OpCase& c : layer_cases(input)) check_against_ref("neon", c, "neon");
  for (const OpCase& c : layer_cases(bf16s)) check_against_ref("neon", c, "neon");
  for (const OpCase& c : edge_cases()) check_against_ref("neon", c, "neon");
  check_against_ref("neon", layer_cases(input)[2], "neon", 2);  // a pool, where the build has one
}

TEST_CASE("neon bf16 GEMMs round: the f32 product misses theirs", "[ops][neon][bf16]") {
  if (skipped()) return;
  for (OpCase c : layer_cases(input)) {
    INFO(describe(c));
    const auto got = BoundCase::open(c, "neon").infer();
    c.attrs.set("compute", std::string("f32"));
    const auto f32 = BoundCase::open(c, "ref").infer();
    CHECK(mismatch(got[0], f32[0], 1e-4) != "");
  }
}

// BFMMLA reads denormal bf16 operands as 0 whatever FPCR says; during a run every kernel does, ref
// included, under the engine's flush-to-zero (docs/c-api.md, Denormals). So neon must equal the
// product over flushed operands, as ref does, and nothing looser: the case is built so that
// keeping the denormals would change the result by 2^-3.
TEST_CASE("neon bf16 GEMMs flush denormal operands, as every kernel does during a run", "[ops][neon][bf16]") {
  if (skipped()) return;
  for (const DenormalCase& c : denormal_cases()) {
    INFO(describe(c.op));
    const std::vector<float> flushed = in_double(c, true);
    REQUIRE(mismatch(in_double(c, false), flushed, c.op.tolerance) != "");  // the denormals count
    BoundCase fast = BoundCase::open(c.op, "neon");
    CHECK(fast.backend_of(c.op.op) == "neon");
    CHECK(mismatch(fast.infer()[0], flushed, c.op.tolerance) == "");
    CHECK(mismatch(BoundCase::open(c.op, "ref").infer()[0], flushed, c.op.tolerance) == "");
  }
}

TEST_CASE("neon bf16 GEMMs allocate nothing while they run", "[ops][neon][bf16][alloc]") {
#ifndef POCK_COUNT_MALLOC
  WARN("SKIPPED: malloc can only be counted on glibc without a sanitizer");
#else
  static void* volatile escaped = nullptr;  // volatile: the allocation cannot be elided
  const long counted = pock::test::mallocs_during([] {
    escaped = std::malloc(100);
    std::free(escaped);
  });
  CHECK(counted == 1);  // the count can fail
  if (skipped()) return;
  const std::vector<OpCase> layer = layer_cases(bf16s), edges = edge_cases();
  for (const OpCase* c : {&layer[1], &layer[2], &layer[5], &edges[3]}) {
    INFO(describe(*c));
    BoundCase fast = BoundCase::open(*c, "neon");
    CHECK(fast.backend_of(c->op) == "neon");
    REQUIRE(fast.try_infer().is_ok());
    Status status;
    CHECK(pock::test::mallocs_during([&] { status = fast.try_infer(); }) == 0);
    CHECK(status.is_ok());
  }
#endif
}

TEST_CASE("neon leaves bf16 GEMMs to others without BF16 (POCK_BF16_ISA=fp32), and f32 GEMMs always",
          "[ops][neon][bf16]") {
  auto elsewhere = [](const OpCase& c) {
    INFO(describe(c));
    BoundCase fast = BoundCase::open(c, "neon");
    CHECK(fast.backend_of(c.op) != "neon");  // cpu (rounding in f32) with OpenBLAS, else ref
    compare_results(fast.infer(), BoundCase::open(c, "ref").infer(), c.tolerance);
  };
  {
    ForcedIsa fallback("fp32");
    for (const OpCase& c : layer_cases(input)) elsewhere(c);
  }
  for (OpCase c : edge_cases()) {
    c.attrs.set("compute", std::string("f32"));
    elsewhere(c);
  }
}

#endif
