// Gelu with output_dtype "bf16" (recipe precision bf16: the GELU writes the bf16 copy that the
// next bf16 GEMM reads, src/compiler/lowering/bf16_producers.hpp):
//   - on ref and on cpu, its bits are those of Cast(to bf16) of the same backend's f32 Gelu, the
//     pair of ops it replaces, across the cpu kernel's chunks and threads' tiles;
//   - cpu against ref within bf16's rounding;
//   - a bad output_dtype, or one for a non-f32 input, is refused by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

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
