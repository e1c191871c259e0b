// Ops that write the bf16 copy of a bf16 GEMM operand themselves (attribute output_dtype "bf16",
// recipe precision bf16: src/compiler/lowering/bf16_producers.hpp), Gelu, Transpose and the binary
// arithmetic ops:
//   - on ref and on cpu, the bits are those of Cast(to bf16) of the same backend's f32 op, the pair
//     of ops it replaces, across the cpu kernels' chunks, tiles and threads;
//   - cpu's Gelu against ref's within bf16's rounding; the binary ops' bits equal on both, with
//     ties to even, NaN, Inf and overflow written out;
//   - a binary op writing bf16 binds cpu for the broadcasts its kernel writes bf16 in (one
//     operand the output's elements, the other too, a scalar or a row), ref for the others;
//   - a bf16 output is not planned over its f32 operand's buffer, even where the bytes match;
//   - a bad output_dtype, or one for a non-f32 input, is refused by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/backend_compare.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Spans erf's and tanh's saturation on both sides; 40003 values cross the cpu kernel's 1024-value
// chunks and its thread tiles unevenly.
std::vector<float> gelu_inputs() {
  std::vector<float> x = random_floats(40003, 71, -7.0f, 7.0f);
  for (float special : {0.0f, -0.0f, 1e-30f, -1e-30f, 50.0f, -50.0f, 3.0e38f}) x.push_back(special);
  return x;
}

std::vector<uint16_t> bits(const HostTensor& t) {
  REQUIRE(t.dtype == DType::kBF16);
  std::vector<uint16_t> v(t.bytes.size() / sizeof(uint16_t));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

float widen(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f = 0.0f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

TEST_CASE("Gelu writing bf16 gives the bits of Cast after the f32 Gelu, on ref and cpu", "[ops][elementwise][bf16]") {
  const std::vector<float> x = gelu_inputs();
  const Shape shape{static_cast<int64_t>(x.size())};
  for (const char* backend : {"ref", "cpu"}) {
    for (const char* form : {"none", "tanh"}) {
      INFO(backend << " approximate " << form);
      const Attrs f32_attrs{{"approximate", std::string(form)}};
      const Attrs bf16_attrs{{"approximate", std::string(form)}, {"output_dtype", std::string("bf16")}};
      auto fused = run_op("Gelu", {HostTensor::f32(shape, x)}, bf16_attrs, {}, backend);
      REQUIRE(fused.is_ok());
      auto f32 = run_op("Gelu", {HostTensor::f32(shape, x)}, f32_attrs, {}, backend);
      REQUIRE(f32.is_ok());
      auto cast = run_op("Cast", {(*f32)[0]}, Attrs{{"to", std::string("bf16")}}, {}, backend);
      REQUIRE(cast.is_ok());
      const std::vector<uint16_t> got = bits((*fused)[0]), want = bits((*cast)[0]);
      REQUIRE(got.size() == x.size());
      size_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
      CHECK(differ == 0);
      // And they are the f32 results rounded: within half a bf16 step (2^-9 relative) of them.
      const std::vector<float> exact = (*f32)[0].f32();
      size_t far = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        far += std::fabs(widen(got[i]) - exact[i]) > std::ldexp(std::fabs(exact[i]), -8) + 1e-37f;
      }
      CHECK(far == 0);
    }
  }
}

TEST_CASE("cpu Gelu writing bf16 matches ref within bf16 rounding", "[ops][elementwise][bf16][cpu]") {
  const std::vector<float> x = gelu_inputs();
  const Shape shape{static_cast<int64_t>(x.size())};
  const Attrs attrs{{"output_dtype", std::string("bf16")}};
  auto cpu = run_op("Gelu", {HostTensor::f32(shape, x)}, attrs, {}, "cpu");
  auto ref = run_op("Gelu", {HostTensor::f32(shape, x)}, attrs, {}, "ref");
  REQUIRE(cpu.is_ok());
  REQUIRE(ref.is_ok());
  const std::vector<uint16_t> a = bits((*cpu)[0]), b = bits((*ref)[0]);
  size_t far = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    // One bf16 step apart at most (the two f32 GELUs may round to neighbouring bf16 values), or
    // 1e-6 apart where x is very negative: cpu's 1 + erf(x / sqrt 2) cancels in f32, ref's in double.
    far += std::fabs(widen(a[i]) - widen(b[i])) > std::ldexp(std::fabs(widen(b[i])), -7) + 1e-6f;
  }
  CHECK(far == 0);
}

TEST_CASE("Gelu's output_dtype is f32 or bf16, bf16 from an f32 input only", "[ops][elementwise][bf16]") {
  auto bad = run_op("Gelu", {HostTensor::f32({2}, {1.0f, 2.0f})}, Attrs{{"output_dtype", std::string("f16")}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("output_dtype"));
  auto f64 = run_op("Gelu", {HostTensor::make(DType::kF64, {2}, std::vector<double>{1.0, 2.0})},
                    Attrs{{"output_dtype", std::string("bf16")}});
  REQUIRE_FALSE(f64.is_ok());
  CHECK_THAT(f64.status().message(), Catch::Contains("f32 input"));
}

TEST_CASE("Transpose writing bf16 gives the bits of Cast after the f32 Transpose, on ref and cpu", "[ops][shape][bf16]") {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  // Attention's head split (rows copied whole), a swap of the two inner dims (16x16 tiles), the
  // NCHW -> NHWC perm (cpu's layout copy in f32) and a reversal; the first is large enough to be
  // split over threads.
  const Case cases[] = {{{4, 64, 12, 32}, {0, 2, 1, 3}}, {{3, 37, 21}, {0, 2, 1}}, {{2, 5, 6, 7}, {0, 2, 3, 1}},
                        {{5, 4, 3}, {2, 1, 0}}};
  uint32_t seed = 80;
  for (const Case& tc : cases) {
    int64_t n = 1;
    for (int64_t d : tc.shape) n *= d;
    const HostTensor x = HostTensor::f32(tc.shape, random_floats(static_cast<size_t>(n), ++seed, -3.0f, 3.0f));
    for (const char* backend : {"ref", "cpu"}) {
      INFO(backend << " perm of rank " << tc.perm.size());
      auto fused = run_op("Transpose", {x}, Attrs{{"perm", tc.perm}, {"output_dtype", std::string("bf16")}}, {}, backend);
      REQUIRE(fused.is_ok());
      auto f32 = run_op("Transpose", {x}, Attrs{{"perm", tc.perm}}, {}, backend);
      REQUIRE(f32.is_ok());
      auto cast = run_op("Cast", {(*f32)[0]}, Attrs{{"to", std::string("bf16")}}, {}, backend);
      REQUIRE(cast.is_ok());
      CHECK((*fused)[0].shape == (*f32)[0].shape);
      CHECK(bits((*fused)[0]) == bits((*cast)[0]));
    }
  }
  auto from_i64 = run_op("Transpose", {HostTensor::i64({2, 1}, {1, 2})}, Attrs{{"output_dtype", std::string("bf16")}});
  REQUIRE_FALSE(from_i64.is_ok());
  CHECK_THAT(from_i64.status().message(), Catch::Contains("output_dtype"));
}

namespace {

// Where the engine that prefers `backend` binds the binary op `op` writing bf16 from a and b.
std::string bf16_binary_backend(const char* op, const HostTensor& a, const HostTensor& b, const char* backend) {
  const OpCase c{op, {values(a.shape, a.f32()), values(b.shape, b.f32())}, Attrs{{"output_dtype", std::string("bf16")}}};
  return BoundCase::open(c, backend).backend_of(op);
}

// Both NaN, or the same bits: the backends' Casts keep NaN as NaN, not its payload.
bool same_bf16(uint16_t a, uint16_t b) { return a == b || (std::isnan(widen(a)) && std::isnan(widen(b))); }

}  // namespace

TEST_CASE("Mul, Div, Add and Sub writing bf16 give the bits of Cast after the f32 op, on ref and cpu",
          "[ops][elementwise][bf16]") {
  // [37, 1100]: rows longer than the cpu kernel's 1024-value chunks, and 40700 values, split over
  // threads; the second operand the same shape, a scalar, a row (with and without a leading 1),
  // or first the row or the scalar; and a full operand with fewer dims than the output.
  const Shape full{37, 1100};
  const HostTensor x = HostTensor::f32(full, random_floats(37 * 1100, 90, -4.0f, 4.0f));
  const HostTensor same = HostTensor::f32(full, random_floats(37 * 1100, 91, 0.5f, 3.0f));
  const HostTensor scalar = HostTensor::f32({1}, {2.828427f});
  const HostTensor row = HostTensor::f32({1100}, random_floats(1100, 92, 0.5f, 3.0f));
  const HostTensor row_2d = HostTensor::f32({1, 1100}, random_floats(1100, 93, -3.0f, -0.5f));
  const HostTensor batch_row = HostTensor::f32({1, 1, 1100}, random_floats(1100, 94, 0.5f, 3.0f));
  const std::pair<HostTensor, HostTensor> operands[] = {{x, same},   {x, scalar}, {scalar, x}, {x, row},
                                                        {row, x},    {x, row_2d}, {x, batch_row}};
  for (const char* op : {"Mul", "Div", "Add", "Sub"}) {
    for (const auto& [a, b] : operands) {
      INFO(op << " of " << a.shape.size() << "-d " << numel(a.shape) << " and " << b.shape.size() << "-d "
              << numel(b.shape) << " values");
      CHECK(bf16_binary_backend(op, a, b, "cpu") == "cpu");
      std::vector<uint16_t> per_backend[2];
      for (int k = 0; k < 2; ++k) {
        const char* backend = k == 0 ? "ref" : "cpu";
        INFO(backend);
        auto fused = run_op(op, {a, b}, Attrs{{"output_dtype", std::string("bf16")}}, {}, backend);
        REQUIRE(fused.is_ok());
        auto f32 = run_op(op, {a, b}, {}, {}, backend);
        REQUIRE(f32.is_ok());
        auto cast = run_op("Cast", {(*f32)[0]}, Attrs{{"to", std::string("bf16")}}, {}, backend);
        REQUIRE(cast.is_ok());
        per_backend[k] = bits((*fused)[0]);
        CHECK(per_backend[k] == bits((*cast)[0]));
      }
      // IEEE arithmetic then the same rounding: cpu's bits are ref's.
      CHECK(per_backend[0] == per_backend[1]);
    }
  }
}

TEST_CASE("A binary op writing bf16 rounds to nearest even, keeps NaN and Inf, and overflows to Inf as Cast does",
          "[ops][elementwise][bf16]") {
  // x * 1 and x + 0 are x: the bf16 bits are x's rounding, written out here by hand (ties to
  // even: 0x3f808000 is halfway between 0x3f80 and 0x3f81 and goes down, 0x3f818000 goes up).
  auto from_bits = [](uint32_t u) {
    float f = 0.0f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  const std::vector<float> x = {1.0f,
                                from_bits(0x3f808000u),
                                from_bits(0x3f818000u),
                                from_bits(0x3f808001u),
                                -from_bits(0x3f818000u),
                                3.4028235e38f,  // rounds up past bf16's largest value: Inf
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(),
                                from_bits(0x3f7f8000u),  // a tie that carries into the exponent
                                -0.0f};
  const std::vector<uint16_t> want = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xbf82, 0x7f80,
                                      0x7f80, 0xff80, 0x7fc0, 0x3f80, 0x8000};
  const Shape shape{static_cast<int64_t>(x.size())};
  for (const char* backend : {"ref", "cpu"}) {
    for (const auto& [op, identity] : {std::pair{"Mul", 1.0f}, std::pair{"Add", -0.0f}}) {
      INFO(op << " on " << backend);
      const HostTensor b = HostTensor::f32({1}, {identity});
      auto fused = run_op(op, {HostTensor::f32(shape, x), b}, Attrs{{"output_dtype", std::string("bf16")}}, {}, backend);
      REQUIRE(fused.is_ok());
      const std::vector<uint16_t> got = bits((*fused)[0]);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("element " << i);
        CHECK(same_bf16(got[i], want[i]));
      }
    }
  }
}

TEST_CASE("A binary op writing bf16 in another broadcast runs on ref, which rounds it as Cast does",
          "[ops][elementwise][bf16]") {
  // A column ([rows, 1]: a channel block to cpu), a row ending in 1 and two broadcasting operands
  // are not the patterns cpu writes bf16 in: the engine that prefers cpu binds ref.
  const HostTensor x = HostTensor::f32({37, 64}, random_floats(37 * 64, 95, -4.0f, 4.0f));
  const HostTensor column = HostTensor::f32({37, 1}, random_floats(37, 96, 0.5f, 3.0f));
  const HostTensor x3 = HostTensor::f32({5, 64, 1}, random_floats(5 * 64, 97, -4.0f, 4.0f));
  const HostTensor row_then_one = HostTensor::f32({64, 1}, random_floats(64, 98, 0.5f, 3.0f));
  const HostTensor left = HostTensor::f32({37, 1, 64}, random_floats(37 * 64, 99, -4.0f, 4.0f));
  const HostTensor right = HostTensor::f32({1, 5, 64}, random_floats(5 * 64, 100, 0.5f, 3.0f));
  const std::pair<HostTensor, HostTensor> operands[] = {{x, column}, {column, x}, {x3, row_then_one}, {left, right}};
  for (const auto& [a, b] : operands) {
    INFO("Mul of " << a.shape.size() << "-d " << numel(a.shape) << " and " << b.shape.size() << "-d " << numel(b.shape)
                   << " values");
    CHECK(bf16_binary_backend("Mul", a, b, "cpu") == "ref");
    auto fused = run_op("Mul", {a, b}, Attrs{{"output_dtype", std::string("bf16")}}, {}, "cpu");
    REQUIRE(fused.is_ok());
    auto f32 = run_op("Mul", {a, b}, {}, {}, "ref");
    REQUIRE(f32.is_ok());
    auto cast = run_op("Cast", {(*f32)[0]}, Attrs{{"to", std::string("bf16")}}, {}, "ref");
    REQUIRE(cast.is_ok());
    CHECK(bits((*fused)[0]) == bits((*cast)[0]));
  }
}

TEST_CASE("A bf16 output never takes over its broadcast operand's buffer", "[ops][elementwise][bf16][memplan]") {
  // e = Exp(x) [4] dies at the Mul, and its 16 bytes are the bf16 output's [2, 4]: were the
  // output written over it, ref's element 4 would read e[0] after element 0 overwrote it.
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {4});
  const TensorId z = g.add_input("z", DType::kF32, {2, 4});
  const TensorId e = g.add_node("Exp", {x})->at(0);
  const TensorId product = g.add_node("Mul", {e, z}, Attrs{{"output_dtype", std::string("bf16")}})->at(0);
  const TensorId y = g.add_node("Cast", {product}, Attrs{{"to", std::string("f32")}})->at(0);  // product: in the arena
  REQUIRE(g.mark_output(y, "y").is_ok());
  auto blob = compile(g, nullptr);
  REQUIRE(blob.is_ok());
  const std::vector<float> xs = {0.5f, -1.0f, 2.0f, 0.25f}, zs = {1.5f, -2.0f, 3.0f, 0.75f, -1.25f, 2.5f, -0.5f, 4.0f};
  for (const char* backend : {"ref", "cpu"}) {
    INFO(backend);
    Engine::Options options;
    options.backend = backend;
    auto engine = Engine::open_buffer(blob->data(), blob->size(), options);
    REQUIRE(engine.is_ok());
    REQUIRE(engine->set_input("x", xs).is_ok());
    REQUIRE(engine->set_input("z", zs).is_ok());
    REQUIRE(engine->infer().is_ok());
    const std::vector<float> got = engine->output<float>("y").value();
    REQUIRE(got.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
      const float want = std::exp(xs[i % 4]) * zs[i];
      CHECK(std::fabs(got[i] - want) <= std::ldexp(std::fabs(want), -8));
    }
  }
}

TEST_CASE("A binary op's output_dtype is f32 or bf16, bf16 from f32 operands only", "[ops][elementwise][bf16]") {
  const HostTensor x = HostTensor::f32({2}, {1.0f, 2.0f});
  auto bad = run_op("Mul", {x, x}, Attrs{{"output_dtype", std::string("f16")}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("output_dtype"));
  const HostTensor i = HostTensor::i64({2}, {1, 2});
  auto from_i64 = run_op("Add", {i, i}, Attrs{{"output_dtype", std::string("bf16")}});
  REQUIRE_FALSE(from_i64.is_ok());
  CHECK_THAT(from_i64.status().message(), Catch::Contains("f32 input"));
}
