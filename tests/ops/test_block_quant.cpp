// The block_quant family (LinearQ, LinearQInputGrad, GatherQ): the reference kernels against f32
// Linear / LinearInputGrad over the weight decoded by this file's own rendering of the Q8_0, Q4_0
// and Q4_1 layouts (K-quants: by the GGUF reader, which test_gguf_reader checks against gguf-py),
// the cpu kernels against ref (both size regimes, partial panels and chunks), the int8 kernels
// of cpu and neon against ref's integers, the input gradient against finite differences, and
// the schema's refusal of weights whose rows do not fit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "frontend/gguf/ggml_types.hpp"
#include "ir/float16.hpp"
#include "ir/op_schema.hpp"
#include "support/backend_compare.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct Format {
  const char* name;
  int64_t block_values, block_bytes;
  uint32_t ggml_type;
};

const Format kFormats[] = {{"q8_0", 32, 34, gguf::kQ8_0}, {"q4_0", 32, 18, gguf::kQ4_0}, {"q4_1", 32, 20, gguf::kQ4_1},
                           {"q4_k", 256, 144, gguf::kQ4_K}, {"q6_k", 256, 210, gguf::kQ6_K}};

void put_half(uint8_t* p, float v) {
  const uint16_t h = float_to_half(v);
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// Random blocks of `f` for a [rows, cols] weight: random quant bytes, and half-precision scales
// (and q4_1's minimum) in a range that keeps the values near unit scale.
std::vector<uint8_t> random_blocks(const Format& f, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.002f, 0.03f), shift(-0.1f, 0.1f);
  const int64_t blocks = rows * cols / f.block_values;
  std::vector<uint8_t> out(static_cast<size_t>(blocks * f.block_bytes));
  for (uint8_t& b : out) b = static_cast<uint8_t>(byte(gen));
  const std::string name = f.name;
  for (int64_t i = 0; i < blocks; ++i) {
    uint8_t* p = out.data() + i * f.block_bytes;
    if (name == "q6_k") {
      put_half(p + 208, scale(gen) / 8);
    } else if (name == "q4_k") {
      put_half(p, scale(gen) / 4);
      put_half(p + 2, scale(gen) / 8);
    } else {
      put_half(p, name == "q8_0" ? scale(gen) / 4 : scale(gen));
      if (name == "q4_1") put_half(p + 2, shift(gen));
    }
  }
  return out;
}

// The weight's f32 values: the 32-value formats by their definition, written here; K-quants by
// the GGUF reader.
std::vector<float> decoded(const Format& f, const std::vector<uint8_t>& blocks, int64_t elements) {
  std::vector<float> w(static_cast<size_t>(elements));
  const std::string name = f.name;
  if (f.block_values == 256) {
    REQUIRE(gguf::to_f32(f.ggml_type, blocks.data(), static_cast<uint64_t>(elements), w.data()).is_ok());
    return w;
  }
  for (int64_t b = 0; b < elements / 32; ++b) {
    const uint8_t* p = blocks.data() + b * f.block_bytes;
    const float d = half_to_float(static_cast<uint16_t>(p[0] | p[1] << 8));
    for (int i = 0; i < 32; ++i) {
      float v = 0.0f;
      if (name == "q8_0") {
        v = d * static_cast<int8_t>(p[2 + i]);
      } else {
        const uint8_t* q = p + (name == "q4_0" ? 2 : 4);
        const int nibble = i < 16 ? (q[i] & 15) : (q[i - 16] >> 4);
        v = name == "q4_0" ? d * static_cast<float>(nibble - 8)
                           : d * static_cast<float>(nibble) + half_to_float(static_cast<uint16_t>(p[2] | p[3] << 8));
      }
      w[static_cast<size_t>(b * 32 + i)] = v;
    }
  }
  return w;
}

Attrs attrs_of(const Format& f, int64_t k) { return Attrs{{"format", std::string(f.name)}, {"in_features", k}}; }

int64_t row_bytes(const Format& f, int64_t k) { return k / f.block_values * f.block_bytes; }

// Values within float rounding of a K-term sum of unit-scale products.
void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
  CHECK(worst <= 1e-5);
}

}  // namespace

TEST_CASE("LinearQ (ref) is Linear over the decoded weight, every format", "[ops][block_quant]") {
  for (const Format& f : kFormats) {
    for (const int64_t k : {f.block_values, 3 * f.block_values}) {
      const int64_t m = 5, n = 7;
      INFO(f.name << " K=" << k);
      const std::vector<uint8_t> blocks = random_blocks(f, n, k, 1);
      const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 2), bias = random_floats(n, 3);
      auto q = run_op("LinearQ", {HostTensor::f32({m, k}, x), HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, blocks),
                                  HostTensor::f32({n}, bias)},
                      attrs_of(f, k), {}, "ref");
      auto want = run_op("Linear", {HostTensor::f32({m, k}, x), HostTensor::f32({n, k}, decoded(f, blocks, n * k)),
                                    HostTensor::f32({n}, bias)},
                         {}, {}, "ref");
      INFO(q.status().message());
      REQUIRE(q.is_ok());
      REQUIRE(want.is_ok());
      check_close((*q)[0].f32(), (*want)[0].f32());
    }
  }
}

TEST_CASE("LinearQInputGrad (ref) is dy times the decoded weight, every format", "[ops][block_quant]") {
  for (const Format& f : kFormats) {
    const int64_t m = 4, n = 9, k = 2 * f.block_values;
    INFO(f.name);
    const std::vector<uint8_t> blocks = random_blocks(f, n, k, 4);
    const std::vector<float> dy = random_floats(static_cast<size_t>(2 * m * n), 5);
    auto q = run_op("LinearQInputGrad", {HostTensor::f32({2, m, n}, dy), HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, blocks)},
                    attrs_of(f, k), {}, "ref");
    auto want = run_op("LinearInputGrad", {HostTensor::f32({2, m, n}, dy), HostTensor::f32({n, k}, decoded(f, blocks, n * k))},
                       {}, {}, "ref");
    INFO(q.status().message());
    REQUIRE(q.is_ok());
    REQUIRE(want.is_ok());
    check_close((*q)[0].f32(), (*want)[0].f32());
  }
}

TEST_CASE("GatherQ (ref) gives the decoded rows and refuses an index out of range", "[ops][block_quant]") {
  for (const Format& f : kFormats) {
    const int64_t rows = 6, k = f.block_values * 2;
    INFO(f.name);
    const std::vector<uint8_t> blocks = random_blocks(f, rows, k, 6);
    const std::vector<float> w = decoded(f, blocks, rows * k);
    const std::vector<int64_t> ids = {3, 0, 5, -1, 3};
    const HostTensor table = HostTensor::make(DType::kU8, {rows, row_bytes(f, k)}, blocks);
    auto out = run_op("GatherQ", {table, HostTensor::i64({1, 5}, ids)}, attrs_of(f, k), {}, "ref");
    INFO(out.status().message());
    REQUIRE(out.is_ok());
    std::vector<float> want;
    for (int64_t id : ids) {
      const int64_t r = id < 0 ? id + rows : id;
      want.insert(want.end(), w.begin() + r * k, w.begin() + (r + 1) * k);
    }
    CHECK((*out)[0].f32() == want);
    CHECK((*out)[0].shape == Shape{1, 5, k});
    auto bad = run_op("GatherQ", {table, HostTensor::i64({1}, {rows})}, attrs_of(f, k), {}, "ref");
    REQUIRE_FALSE(bad.is_ok());
    CHECK_THAT(bad.status().message(), Catch::Contains("out of range"));
  }
}

TEST_CASE("LinearQ's gradients match finite differences (x and bias; the blocks are frozen)", "[grad][block_quant]") {
  for (const Format& f : {kFormats[0], kFormats[2], kFormats[3]}) {
    INFO(f.name);
    const int64_t n = 5, k = f.block_values;
    const HostTensor w = HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, random_blocks(f, n, k, 7));
    const HostTensor x = HostTensor::f32({3, k}, random_floats(static_cast<size_t>(3 * k), 8));
    const HostTensor b = HostTensor::f32({n}, random_floats(n, 9));
    CHECK(check_op_gradients("LinearQ", {x, w, b}, attrs_of(f, k), {true, false, true}));
  }
}

TEST_CASE("LinearQ's schema refuses weights whose rows do not hold in_features of the format", "[ops][block_quant]") {
  const Format& f = kFormats[2];  // q4_1: 20 bytes per 32 values
  const TensorType x{DType::kF32, {2, 64}};
  auto infer = [&](TensorType w, Attrs attrs) {
    std::vector<TensorType> outs;
    return infer_types("LinearQ", "node", {&x, &w}, attrs, &outs);
  };
  CHECK(infer({DType::kU8, {3, 40}}, attrs_of(f, 64)).is_ok());
  CHECK_THAT(infer({DType::kU8, {3, 39}}, attrs_of(f, 64)).message(), Catch::Contains("[N, 40]"));
  CHECK_FALSE(infer({DType::kI8, {3, 40}}, attrs_of(f, 64)).is_ok());
  CHECK_THAT(infer({DType::kU8, {3, 40}}, attrs_of(f, 48)).message(), Catch::Contains("multiple"));
  CHECK_THAT(infer({DType::kU8, {3, 40}}, Attrs{{"format", std::string("q5_0")}, {"in_features", int64_t{64}}}).message(),
             Catch::Contains("format"));
  const TensorType x32{DType::kF32, {2, 32}};
  std::vector<TensorType> outs;
  const TensorType w{DType::kU8, {3, 40}};
  CHECK_THAT(infer_types("LinearQ", "node", {&x32, &w}, attrs_of(f, 64), &outs).message(), Catch::Contains("in_features"));
}

#ifdef POCK_HAVE_OPENBLAS
TEST_CASE("cpu LinearQ and LinearQInputGrad match ref: streaming rows and decoded panels", "[ops][cpu][block_quant]") {
  // M <= 8 streams 256-value chunks (K = 576: two whole chunks and a partial one); larger M decodes
  // panels of rows for sgemm (K = 4096: 32-row panels, so N = 70 ends on a partial panel; K = 576:
  // 224-row panels, N = 300).
  struct Shape3 {
    int64_t m, n, k;
  };
  uint32_t seed = 100;
  for (const Format& f : kFormats) {
    for (const Shape3 s : {Shape3{1, 37, 576}, Shape3{3, 20, 1024}, Shape3{8, 300, 576}, Shape3{9, 70, 4096},
                           Shape3{64, 300, 576}, Shape3{130, 33, 768}}) {
      if (s.k % f.block_values != 0) continue;
      INFO(f.name << " M=" << s.m << " N=" << s.n << " K=" << s.k);
      const Operand w = u8s({s.n, row_bytes(f, s.k)}, random_blocks(f, s.n, s.k, ++seed));
      check_against_ref("cpu", {"LinearQ", {input({s.m, s.k}, ++seed), w, input({s.n}, ++seed)}, attrs_of(f, s.k)});
      check_against_ref("cpu", {"LinearQ", {input({s.m, s.k}, ++seed), w}, attrs_of(f, s.k)});
      check_against_ref("cpu", {"LinearQInputGrad", {input({s.m, s.n}, ++seed), w}, attrs_of(f, s.k)});
    }
  }
}
#endif

#ifdef POCK_HAVE_OPENBLAS
TEST_CASE("cpu LinearQ decodes subnormal, smallest normal, largest and negative half scales as ref does",
          "[ops][cpu][block_quant]") {
  const uint16_t halves[] = {0x0001, 0x03ff, 0x0400, 0x8001, 0xbc00, 0x3c00, 0x0200};
  uint32_t seed = 300;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    INFO(f.name);
    const int64_t n = 7, k = 64;
    std::vector<uint8_t> blocks = random_blocks(f, n, k, ++seed);
    for (int64_t b = 0; b < n * k / 32; ++b) {
      uint8_t* p = blocks.data() + b * f.block_bytes;
      const uint16_t h = halves[b % 7];
      p[0] = static_cast<uint8_t>(h & 0xff);
      p[1] = static_cast<uint8_t>(h >> 8);
    }
    for (const int64_t m : {int64_t{2}, int64_t{20}}) {
      check_against_ref("cpu", {"LinearQ", {input({m, k}, ++seed), u8s({n, row_bytes(f, k)}, blocks)}, attrs_of(f, k)});
    }
  }
}
#endif

namespace {

Attrs int8_attrs(const Format& f, int64_t k) {
  Attrs a = attrs_of(f, k);
  a.set("compute", std::string("int8"));
  return a;
}

// max |v| / 127 over each run of 32 values of `v` taken with stride `stride` from `start`.
double block_step(const std::vector<float>& v, size_t start, size_t stride) {
  double amax = 0.0;
  for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(static_cast<double>(v[start + i * stride])));
  return amax / 127.0;
}

// The first outputs of `op` (compute int8) and of `exact_op` over the decoded weight, both on ref.
std::pair<std::vector<float>, std::vector<float>> int8_and_exact(const std::string& op, std::vector<HostTensor> int8_inputs,
                                                                 const Attrs& attrs, const std::string& exact_op,
                                                                 std::vector<HostTensor> exact_inputs) {
  auto q = run_op(op, int8_inputs, attrs, {}, "ref");
  auto exact = run_op(exact_op, exact_inputs, {}, {}, "ref");
  INFO(q.status().message());
  REQUIRE(q.is_ok());
  REQUIRE(exact.is_ok());
  return {(*q)[0].f32(), (*exact)[0].f32()};
}

}  // namespace

// The int8 arithmetic (compute "int8") is checked against the exact product, not against itself:
// rounding each activation to its block's step s = max|x| / 127 moves it by at most s / 2, so
// |y_int8 - y| <= sum_p |w[j, p]| s(p) / 2 (plus float rounding), and a difference must exist.
TEST_CASE("LinearQ int8 (ref) is the exact product within the activations' rounding", "[ops][block_quant]") {
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    const int64_t m = 6, n = 11, k = 96;
    INFO(f.name);
    const std::vector<uint8_t> blocks = random_blocks(f, n, k, 21);
    const std::vector<float> w = decoded(f, blocks, n * k);
    const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 22), bias = random_floats(n, 23);
    const auto [got, want] = int8_and_exact(
        "LinearQ", {HostTensor::f32({m, k}, x), HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, blocks), HostTensor::f32({n}, bias)},
        int8_attrs(f, k), "Linear", {HostTensor::f32({m, k}, x), HostTensor::f32({n, k}, w), HostTensor::f32({n}, bias)});
    double largest = 0.0;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double bound = 1e-5;
        for (int64_t b = 0; b < k / 32; ++b) {
          const double step = block_step(x, static_cast<size_t>(r * k + 32 * b), 1);
          for (int64_t i = 0; i < 32; ++i) bound += std::fabs(w[static_cast<size_t>(j * k + 32 * b + i)]) * step / 2;
        }
        const double diff = std::fabs(got[static_cast<size_t>(r * n + j)] - want[static_cast<size_t>(r * n + j)]);
        CHECK(diff <= bound);
        largest = std::max(largest, diff);
      }
    }
    CHECK(largest > 0.0);
  }
}

// The input gradient rounds dy per 32 of its values and each weight column per the same 32 rows:
// |dx_int8 - dx| <= sum_n (|dy| e_w + |w| e_dy + e_dy e_w), e = half a step.
TEST_CASE("LinearQInputGrad int8 (ref) is dy times the weight within both roundings", "[ops][block_quant]") {
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    const int64_t m = 5, n = 64, k = 64;
    INFO(f.name);
    const std::vector<uint8_t> blocks = random_blocks(f, n, k, 24);
    const std::vector<float> w = decoded(f, blocks, n * k);
    const std::vector<float> dy = random_floats(static_cast<size_t>(m * n), 25);
    const auto [got, want] = int8_and_exact("LinearQInputGrad",
                                            {HostTensor::f32({m, n}, dy), HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, blocks)},
                                            int8_attrs(f, k), "LinearInputGrad", {HostTensor::f32({m, n}, dy), HostTensor::f32({n, k}, w)});
    double largest = 0.0;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t p = 0; p < k; ++p) {
        double bound = 1e-5;
        for (int64_t c = 0; c < n / 32; ++c) {
          const double e_dy = block_step(dy, static_cast<size_t>(r * n + 32 * c), 1) / 2;
          const double e_w = block_step(w, static_cast<size_t>(32 * c * k + p), static_cast<size_t>(k)) / 2;
          for (int64_t i = 0; i < 32; ++i) {
            const int64_t row = 32 * c + i;
            bound += std::fabs(dy[static_cast<size_t>(r * n + row)]) * e_w + std::fabs(w[static_cast<size_t>(row * k + p)]) * e_dy +
                     e_dy * e_w;
          }
        }
        const double diff = std::fabs(got[static_cast<size_t>(r * k + p)] - want[static_cast<size_t>(r * k + p)]);
        CHECK(diff <= bound);
        largest = std::max(largest, diff);
      }
    }
    CHECK(largest > 0.0);
  }
}

TEST_CASE("compute int8 is refused for K-quants, unknown values and a dy not in 32-value blocks", "[ops][block_quant]") {
  const TensorType x{DType::kF32, {2, 256}};
  std::vector<TensorType> outs;
  const TensorType wk{DType::kU8, {3, 144}};
  CHECK_THAT(infer_types("LinearQ", "node", {&x, &wk}, int8_attrs(kFormats[3], 256), &outs).message(), Catch::Contains("int8"));
  Attrs odd = attrs_of(kFormats[0], 256);
  odd.set("compute", std::string("fp8"));
  const TensorType w8{DType::kU8, {3, 272}};
  CHECK_THAT(infer_types("LinearQ", "node", {&x, &w8}, odd, &outs).message(), Catch::Contains("compute"));
  CHECK(infer_types("LinearQ", "node", {&x, &w8}, int8_attrs(kFormats[0], 256), &outs).is_ok());
  const TensorType dy{DType::kF32, {2, 3}};
  CHECK_THAT(infer_types("LinearQInputGrad", "node", {&dy, &w8}, int8_attrs(kFormats[0], 256), &outs).message(),
             Catch::Contains("multiple of 32"));
}

#ifdef POCK_HAVE_OPENBLAS
// AVX-512 VNNI where the CPU has it (row tiles of 8 and their remainders, partial column groups,
// shared packs); ref elsewhere, which the binding check states.
// The cpu's int8 products against ref over tile remainders, partial column groups and shared packs.
void check_cpu_int8(bool bound_to_cpu) {
  struct Shape3 {
    int64_t m, n, k;
  };
  uint32_t seed = 400;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    for (const Shape3 s : {Shape3{1, 40, 64}, Shape3{7, 32, 576}, Shape3{8, 96, 32}, Shape3{13, 64, 128}, Shape3{67, 160, 96}}) {
      INFO(f.name << " M=" << s.m << " N=" << s.n << " K=" << s.k);
      const Operand w = frozen_u8s({s.n, row_bytes(f, s.k)}, random_blocks(f, s.n, s.k, ++seed));
      const Attrs a = int8_attrs(f, s.k);
      const std::string want = BoundCase::open({"LinearQ", {input({s.m, s.k}, 1), w}, a}, "cpu").backend_of("LinearQ");
      INFO("bound to " << want);
      if (bound_to_cpu) CHECK(want == "cpu");
      check_against_ref("cpu", {"LinearQ", {input({s.m, s.k}, ++seed), w, input({s.n}, ++seed)}, a}, want);
      check_against_ref("cpu", {"LinearQ", {input({s.m, s.k}, ++seed), w}, a}, want);
      if (s.n % 32 == 0) check_against_ref("cpu", {"LinearQInputGrad", {input({s.m, s.n}, ++seed), w}, a}, want);
    }
  }
}

// AVX-512 VNNI where the CPU has it; ref elsewhere, which the binding check states.
TEST_CASE("cpu int8 LinearQ and LinearQInputGrad match ref", "[ops][cpu][block_quant]") {
  bool vnni = false;
#if defined(__x86_64__) && defined(__GNUC__)
  vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
#endif
  check_cpu_int8(vnni);
}

// The AVX2 path (vpmaddubsw; q8 through the sign trick), forced on a VNNI machine.
TEST_CASE("cpu int8 on AVX2 matches ref", "[ops][cpu][block_quant]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c")) {
    WARN("skipped: this CPU has no AVX2");
    return;
  }
  setenv("POCK_INT8_ISA", "avx2", 1);
  check_cpu_int8(true);
  unsetenv("POCK_INT8_ISA");
#else
  WARN("skipped: not an x86 build");
#endif
}
#endif

#ifdef POCK_HAVE_NEON
// kernels/neon/block_quant.cpp: SDOT where the CPU has it, int16 products otherwise (qemu's
// default CPU has SDOT; `qemu-aarch64 -cpu cortex-a57` runs the other path). Row tiles of 4 (and
// 2) with their remainders, partial groups of 8 columns, K of one block and of 18.
TEST_CASE("neon int8 LinearQ and LinearQInputGrad match ref", "[ops][neon][block_quant]") {
  struct Shape3 {
    int64_t m, n, k;
  };
  uint32_t seed = 600;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    for (const Shape3 s : {Shape3{1, 40, 64}, Shape3{3, 37, 96}, Shape3{6, 32, 576}, Shape3{8, 96, 32}, Shape3{13, 64, 128},
                           Shape3{67, 161, 96}}) {
      INFO(f.name << " M=" << s.m << " N=" << s.n << " K=" << s.k);
      const Operand w = frozen_u8s({s.n, row_bytes(f, s.k)}, random_blocks(f, s.n, s.k, ++seed));
      const Attrs a = int8_attrs(f, s.k);
      check_against_ref("neon", {"LinearQ", {input({s.m, s.k}, ++seed), w, input({s.n}, ++seed)}, a});
      check_against_ref("neon", {"LinearQ", {input({2, s.m, s.k}, ++seed), w}, a});
      if (s.n % 32 == 0) check_against_ref("neon", {"LinearQInputGrad", {input({s.m, s.n}, ++seed), w}, a});
      // compute f32 is left to the other backends.
      const std::string exact = BoundCase::open({"LinearQ", {input({s.m, s.k}, 1), w}, attrs_of(f, s.k)}, "neon").backend_of("LinearQ");
      CHECK(exact != "neon");
    }
  }
}

// Activations whose every value is a rounding tie (a block's largest |x| is 127/64, so x * 127 /
// amax = 64 x lands on k + 1/2): int8_rows.h rounds them away from zero, and so must the
// vector quantizer. Also an all-zero block (scale 0) and a NaN (the row's outputs NaN, as ref).
TEST_CASE("neon int8 LinearQ quantizes ties, zero blocks and NaN as ref does", "[ops][neon][block_quant]") {
  const int64_t m = 5, n = 24, k = 128;
  std::mt19937 gen(610);
  std::uniform_int_distribution<int> half_steps(-127, 126);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(half_steps(gen)) + 0.5f) / 64.0f;
  for (int64_t b = 0; b < m * k / 32; ++b) x[static_cast<size_t>(32 * b + b % 32)] = b % 2 ? 127.0f / 64.0f : -127.0f / 64.0f;
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // row 0, block 2
  x[static_cast<size_t>(3 * k + 40)] = NAN;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    INFO(f.name);
    const Operand w = frozen_u8s({n, row_bytes(f, k)}, random_blocks(f, n, k, 611));
    OpCase c{"LinearQ", {values({m, k}, x), w}, int8_attrs(f, k)};
    c.tolerance = 1e-5;
    check_against_ref("neon", c);
  }
}

// The pack keeps the blocks' f16 scales and widens them in the kernel: subnormal and smallest
// normal halves (flush-to-zero is on during a run, and must not touch them; the tolerance sees
// a lost 2^-24 block), then the largest, 2^15 and +-1 (sums of terms near 1e6: f32's tolerance).
TEST_CASE("neon int8 LinearQ widens subnormal and extreme half scales as ref does", "[ops][neon][block_quant]") {
  const std::vector<uint16_t> small = {0x0001, 0x03ff, 0x0400, 0x8001, 0x0200, 0x83ff}, large = {0x7bff, 0x3c00, 0xbc00, 0x7800};
  uint32_t seed = 630;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    for (const auto& [halves, tolerance] : {std::pair{small, 1e-7}, std::pair{large, 1e-4}}) {
      INFO(f.name << " tolerance " << tolerance);
      const int64_t n = 9, k = 64;
      std::vector<uint8_t> blocks = random_blocks(f, n, k, ++seed);
      for (size_t b = 0; b < static_cast<size_t>(n * k / 32); ++b) {
        uint8_t* p = blocks.data() + b * static_cast<size_t>(f.block_bytes);
        const uint16_t h = halves[b % halves.size()];
        p[0] = static_cast<uint8_t>(h & 0xff);
        p[1] = static_cast<uint8_t>(h >> 8);
        if (f.block_bytes == 20) {  // q4_1's m: the same halves, shifted by one block
          const uint16_t mh = halves[(b + 1) % halves.size()];
          p[2] = static_cast<uint8_t>(mh & 0xff);
          p[3] = static_cast<uint8_t>(mh >> 8);
        }
      }
      for (const int64_t m : {int64_t{1}, int64_t{6}}) {
        OpCase c{"LinearQ", {input({m, k}, ++seed), frozen_u8s({n, row_bytes(f, k)}, blocks)}, int8_attrs(f, k)};
        c.tolerance = tolerance;
        check_against_ref("neon", c);
      }
    }
  }
}
#endif

namespace {

// Labels in [0, n) with every fifth row ignored (-100).
std::vector<int64_t> head_labels(int64_t rows, int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> labels(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) labels[static_cast<size_t>(r)] = r % 5 == 3 ? -100 : pick(gen);
  return labels;
}

}  // namespace

// The fused head is defined as the composition of the ops it replaces; chunks of 32 rows must not
// show (40 rows: a full chunk and a partial one).
TEST_CASE("LinearQCrossEntropy (ref) is LinearQ, SoftmaxCrossEntropy and their x gradient in turn", "[ops][block_quant]") {
  for (const Format& f : {kFormats[0], kFormats[2]}) {
    for (const bool int8 : {false, true}) {
      const int64_t m = 40, n = 96, k = 64;
      INFO(f.name << (int8 ? " int8" : " f32"));
      Attrs a = int8 ? int8_attrs(f, k) : attrs_of(f, k);
      a.set("label_smoothing", 0.1);
      const HostTensor w = HostTensor::make(DType::kU8, {n, row_bytes(f, k)}, random_blocks(f, n, k, 31));
      const HostTensor x = HostTensor::f32({2, m / 2, k}, random_floats(static_cast<size_t>(m * k), 32));
      const HostTensor labels = HostTensor::i64({2, m / 2}, head_labels(m, n, 33));
      auto fused = run_op("LinearQCrossEntropy", {x, w, labels}, a, {}, "ref");
      INFO(fused.status().message());
      REQUIRE(fused.is_ok());
      auto logits = run_op("LinearQ", {x, w}, a, {}, "ref");
      REQUIRE(logits.is_ok());
      const Attrs ce{{"label_smoothing", 0.1}};
      auto loss = run_op("SoftmaxCrossEntropy", {(*logits)[0], labels}, ce, {}, "ref");
      auto dlogits = run_op("SoftmaxCrossEntropyGrad", {HostTensor::f32({}, {1.0f}), (*logits)[0], labels}, ce, {}, "ref");
      REQUIRE(loss.is_ok());
      REQUIRE(dlogits.is_ok());
      auto dx = run_op("LinearQInputGrad", {(*dlogits)[0], w}, a, {}, "ref");
      REQUIRE(dx.is_ok());
      check_close((*fused)[0].f32(), (*loss)[0].f32());
      check_close((*fused)[1].f32(), (*dx)[0].f32());
      CHECK((*fused)[1].shape == Shape{2, m / 2, k});
    }
  }
}

#ifdef POCK_HAVE_OPENBLAS
TEST_CASE("cpu LinearQCrossEntropy (int8) matches ref, with and without the gradient", "[ops][cpu][block_quant]") {
  uint32_t seed = 500;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    for (const int64_t m : {int64_t{1}, int64_t{37}, int64_t{100}}) {  // 100: a full 64-row chunk and a partial one
      const int64_t n = m == 37 ? 4096 : 96, k = m == 37 ? 576 : 64;
      INFO(f.name << " M=" << m);
      const Operand w = frozen_u8s({n, row_bytes(f, k)}, random_blocks(f, n, k, ++seed));
      const Attrs a = int8_attrs(f, k);
      const Operand labels = int64s({m}, head_labels(m, n, ++seed));
      const std::string want = BoundCase::open({"LinearQCrossEntropy", {input({m, k}, 1), w, labels}, a}, "cpu").backend_of("LinearQCrossEntropy");
#if defined(__x86_64__) && defined(__GNUC__)
      if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) CHECK(want == "cpu");
#endif
      check_against_ref("cpu", {"LinearQCrossEntropy", {input({m, k}, ++seed, -3.0f, 3.0f), w, labels}, a}, want);
    }
  }
}
#endif

#ifdef POCK_HAVE_NEON
// 37 rows: a chunk of 32 and a partial one; 4096 classes (a vocabulary-sized head); with and
// without the gradient output (eval).
TEST_CASE("neon LinearQCrossEntropy (int8) matches ref, with and without the gradient", "[ops][neon][block_quant]") {
  uint32_t seed = 620;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    for (const int64_t m : {int64_t{1}, int64_t{37}}) {
      const int64_t n = m == 37 ? 4096 : 96, k = m == 37 ? 128 : 64;
      INFO(f.name << " M=" << m);
      const Operand w = frozen_u8s({n, row_bytes(f, k)}, random_blocks(f, n, k, ++seed));
      Attrs a = int8_attrs(f, k);
      a.set("label_smoothing", 0.1);
      const Operand labels = int64s({m}, head_labels(m, n, ++seed));
      check_against_ref("neon", {"LinearQCrossEntropy", {input({m, k}, ++seed, -3.0f, 3.0f), w, labels}, a});
      a.set("with_gradient", int64_t{0});
      check_against_ref("neon", {"LinearQCrossEntropy", {input({m, k}, ++seed, -3.0f, 3.0f), w, labels}, a});
    }
  }
}
#endif

#ifdef POCK_HAVE_OPENBLAS
// With compute int8 the cpu reads the rows from the weight's int8 pack: exactly ref's values.
TEST_CASE("cpu GatherQ (int8) gives ref's rows exactly and refuses an index out of range", "[ops][cpu][block_quant]") {
  uint32_t seed = 600;
  for (const Format& f : {kFormats[0], kFormats[1], kFormats[2]}) {
    INFO(f.name);
    const int64_t rows = 37, k = 96;
    const Operand table = frozen_u8s({rows, row_bytes(f, k)}, random_blocks(f, rows, k, ++seed));
    const OpCase c{"GatherQ", {table, int64s({2, 4}, {3, 0, 36, -1, 17, 16, 3, -37})}, int8_attrs(f, k)};
    BoundCase fast = BoundCase::open(c, "cpu"), ref = BoundCase::open(c, "ref");
    bool vnni_or_avx2 = false;
#if defined(__x86_64__) && defined(__GNUC__)
    vnni_or_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
    if (vnni_or_avx2) CHECK(fast.backend_of("GatherQ") == "cpu");
    CHECK(fast.infer() == ref.infer());
    auto bad = run_op("GatherQ", {HostTensor::make(DType::kU8, {rows, row_bytes(f, k)}, random_blocks(f, rows, k, seed)),
                                  HostTensor::i64({1}, {rows})},
                      int8_attrs(f, k), {}, "cpu");
    REQUIRE_FALSE(bad.is_ok());
    CHECK_THAT(bad.status().message(), Catch::Contains("out of range"));
  }
}
#endif
