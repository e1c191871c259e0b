// activation_mask family: ClipMask and MaskGrad. The reference kernels against hand-computed
// masks and a loop written here; the pair (ClipMask, MaskGrad) against the fused gradient ops it
// replaces (ReluGrad, Relu6Grad, ClipGrad), bit for bit; the cpu kernels against ref.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/backend_compare.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

HostTensor u8_tensor(Shape shape, const std::vector<uint8_t>& v) {
  return HostTensor::make(DType::kU8, std::move(shape), v);
}

std::vector<uint8_t> run_mask(const std::vector<float>& v, const Attrs& attrs, const std::string& backend) {
  const Shape shape{static_cast<int64_t>(v.size())};
  auto out = run_op("ClipMask", {HostTensor::f32(shape, v)}, attrs, {}, backend);
  INFO(out.status().to_string());
  REQUIRE(out.is_ok());
  REQUIRE(out.value()[0].dtype == DType::kU8);
  return out.value()[0].values<uint8_t>();
}

std::vector<float> run_binary(const std::string& op, const HostTensor& a, const HostTensor& b, const Attrs& attrs,
                              const std::string& backend) {
  auto out = run_op(op, {a, b}, attrs, {}, backend);
  INFO(op << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  return out.value()[0].f32();
}

// Bitwise equality (NaN == NaN of the same bits): the pair must reproduce the fused op exactly.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Random values in [lo, hi) with the kinks, signed zeros, infinities and NaN mixed in.
std::vector<float> values_with_kinks(size_t n, uint32_t seed, float lo, float hi, const std::vector<float>& kinks) {
  std::vector<float> v = random_floats(n, seed, lo, hi);
  std::vector<float> special = kinks;
  for (float k : kinks) {
    special.push_back(std::nextafter(k, -kInf));
    special.push_back(std::nextafter(k, kInf));
  }
  for (float s : {0.0f, -0.0f, kInf, -kInf, kNaN}) special.push_back(s);
  for (size_t i = 0; i < special.size() && 3 * i < n; ++i) v[3 * i] = special[i];
  return v;
}

}  // namespace

TEST_CASE("ClipMask and MaskGrad shape inference and errors", "[ops][activation_mask][errors]") {
  auto mask = infer("ClipMask", {f32({2, 3, 4})}, Attrs{{"min", 0.0}, {"max", 6.0}});
  REQUIRE(mask.is_ok());
  CHECK(mask.value()[0].dtype == DType::kU8);
  CHECK(mask.value()[0].shape == Shape{2, 3, 4});
  CHECK_FALSE(infer("ClipMask", {TensorType{DType::kI64, {3}}}, {}).is_ok());
  CHECK_FALSE(infer("ClipMask", {f32({3})}, Attrs{{"inclusive", int64_t{2}}}).is_ok());

  auto dx = infer("MaskGrad", {f32({2, 3}), TensorType{DType::kU8, {2, 3}}}, {});
  REQUIRE(dx.is_ok());
  CHECK(dx.value()[0].dtype == DType::kF32);
  CHECK(dx.value()[0].shape == Shape{2, 3});
  CHECK(infer("MaskGrad", {f32({2, 3}), TensorType{DType::kBool, {2, 3}}}, {}).is_ok());
  CHECK_FALSE(infer("MaskGrad", {f32({2, 3}), f32({2, 3})}, {}).is_ok());                       // an f32 "mask"
  CHECK_FALSE(infer("MaskGrad", {f32({2, 3}), TensorType{DType::kU8, {3, 2}}}, {}).is_ok());    // another shape
  CHECK_FALSE(infer("MaskGrad", {TensorType{DType::kI64, {3}}, TensorType{DType::kU8, {3}}}, {}).is_ok());
}

TEST_CASE("ClipMask (ref): hand-computed masks at the bounds, NaN and infinities", "[ops][activation_mask]") {
  const std::vector<float> v = {-1.0f, -0.0f, 0.0f, 1e-30f, 3.0f, 6.0f, 6.0000005f, kInf, -kInf, kNaN};
  // Relu's mask from its output: y > 0.
  CHECK(run_mask(v, Attrs{{"min", 0.0}}, "ref") == std::vector<uint8_t>{0, 0, 0, 1, 1, 1, 1, 1, 0, 0});
  // Relu6's: 0 < y < 6.
  CHECK(run_mask(v, Attrs{{"min", 0.0}, {"max", 6.0}}, "ref") == std::vector<uint8_t>{0, 0, 0, 1, 1, 0, 0, 0, 0, 0});
  // Clip's, bounds included: 0 <= x <= 6.
  CHECK(run_mask(v, Attrs{{"min", 0.0}, {"max", 6.0}, {"inclusive", int64_t{1}}}, "ref") ==
        std::vector<uint8_t>{0, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  // An absent bound tests nothing: everything but NaN is inside.
  CHECK(run_mask(v, Attrs{{"inclusive", int64_t{1}}}, "ref") == std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
  CHECK(run_mask(v, {}, "ref") == std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
  // Infinite bounds given explicitly do test: -inf < v < inf excludes the infinities.
  CHECK(run_mask(v, Attrs{{"min", -HUGE_VAL}, {"max", HUGE_VAL}}, "ref") ==
        std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 0, 0, 0});
  // A bound between two floats: 0.1 (double) lies between 0.099999994f and 0.1f (= 0.10000000149...).
  const std::vector<float> near{0.099999994f, 0.1f, 0.10000001f};
  CHECK(run_mask(near, Attrs{{"max", 0.1}}, "ref") == std::vector<uint8_t>{1, 0, 0});
  CHECK(run_mask(near, Attrs{{"max", 0.1}, {"inclusive", int64_t{1}}}, "ref") == std::vector<uint8_t>{1, 0, 0});
  CHECK(run_mask(near, Attrs{{"min", 0.1}}, "ref") == std::vector<uint8_t>{0, 1, 1});
  CHECK(run_mask(near, Attrs{{"min", 0.1}, {"inclusive", int64_t{1}}}, "ref") == std::vector<uint8_t>{0, 1, 1});
}

TEST_CASE("ClipMask (ref) matches a loop on random values", "[ops][activation_mask]") {
  const std::vector<float> v = values_with_kinks(500, 11, -2.0f, 2.0f, {-0.5f, 0.75f});
  for (const bool inclusive : {false, true}) {
    INFO("inclusive " << inclusive);
    std::vector<uint8_t> want(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      want[i] = inclusive ? (v[i] >= -0.5f && v[i] <= 0.75f) : (v[i] > -0.5f && v[i] < 0.75f);
    }
    CHECK(run_mask(v, Attrs{{"min", -0.5}, {"max", 0.75}, {"inclusive", int64_t{inclusive}}}, "ref") == want);
  }
}

TEST_CASE("MaskGrad (ref) is dy where the mask is set, dy * 0 elsewhere", "[ops][activation_mask]") {
  const std::vector<float> dy = {1.5f, -2.0f, kInf, kInf, kNaN, kNaN, -0.0f, 3.0f};
  const std::vector<uint8_t> mask = {1, 0, 1, 0, 1, 0, 1, 7};  // any nonzero byte is set
  const std::vector<float> dx = run_binary("MaskGrad", HostTensor::f32({8}, dy), u8_tensor({8}, mask), {}, "ref");
  REQUIRE(dx.size() == 8);
  CHECK(dx[0] == 1.5f);
  CHECK(dx[1] == 0.0f);
  CHECK(std::signbit(dx[1]));  // -2 * 0 = -0, as dy * f'(x)
  CHECK(dx[2] == kInf);
  CHECK(std::isnan(dx[3]));    // inf * 0: ReluGrad's product gives NaN too
  CHECK(std::isnan(dx[4]));
  CHECK(std::isnan(dx[5]));
  CHECK((dx[6] == 0.0f && std::signbit(dx[6])));
  CHECK(dx[7] == 3.0f);
}

TEST_CASE("ClipMask + MaskGrad reproduce ReluGrad, Relu6Grad and ClipGrad bit for bit", "[ops][activation_mask]") {
  struct Case {
    const char* grad_op;
    Attrs grad_attrs, mask_attrs;
    bool from_output;  // the mask reads y = f(x) (Relu, Relu6) or x (Clip)
    float lo, hi;      // the forward's range, for y
    std::vector<float> kinks;
  };
  const std::vector<Case> cases = {
      {"ReluGrad", {}, Attrs{{"min", 0.0}}, true, 0.0f, kInf, {0.0f}},
      {"Relu6Grad", {}, Attrs{{"min", 0.0}, {"max", 6.0}}, true, 0.0f, 6.0f, {0.0f, 6.0f}},
      {"ClipGrad", Attrs{{"min", -0.5}, {"max", 0.1}}, Attrs{{"min", -0.5}, {"max", 0.1}, {"inclusive", int64_t{1}}},
       false, 0, 0, {-0.5f, 0.1f}},
      {"ClipGrad", Attrs{{"max", 2.0}}, Attrs{{"max", 2.0}, {"inclusive", int64_t{1}}}, false, 0, 0, {2.0f}},
  };
  const size_t n = 3000;
  const Shape shape{3, 1000};
  const std::vector<float> dy = values_with_kinks(n, 21, -1.0f, 1.0f, {});
  for (const Case& c : cases) {
    const std::vector<float> x = values_with_kinks(n, 22, -3.0f, 9.0f, c.kinks);
    std::vector<float> v = x;
    if (c.from_output) {  // y = clamp(x) as the Relu / Relu6 kernels write it: a NaN passes through
      for (float& e : v) e = e < c.lo ? c.lo : (e > c.hi ? c.hi : e);
    }
    for (const char* backend : {"ref", "cpu"}) {
      INFO(c.grad_op << " on " << backend);
      const std::vector<float> fused =
          run_binary(c.grad_op, HostTensor::f32(shape, dy), HostTensor::f32(shape, x), c.grad_attrs, backend);
      auto mask = run_op("ClipMask", {HostTensor::f32(shape, v)}, c.mask_attrs, {}, backend);
      REQUIRE(mask.is_ok());
      const std::vector<float> split = run_binary("MaskGrad", HostTensor::f32(shape, dy), mask.value()[0], {}, backend);
      CHECK(same_bits(split, fused));
    }
  }
}

TEST_CASE("cpu ClipMask and MaskGrad match ref", "[ops][activation_mask][cpu]") {
  // The bounds the cpu kernel must not round to the nearest float (0.1f > 0.1): hand-computed.
  const std::vector<float> near{0.099999994f, 0.1f, 0.10000001f};
  CHECK(run_mask(near, Attrs{{"min", 0.1}}, "cpu") == std::vector<uint8_t>{0, 1, 1});
  CHECK(run_mask(near, Attrs{{"max", 0.1}, {"inclusive", int64_t{1}}}, "cpu") == std::vector<uint8_t>{1, 0, 0});
  const std::vector<Attrs> bounds = {
      Attrs{{"min", 0.0}},
      Attrs{{"min", 0.0}, {"max", 6.0}},
      Attrs{{"min", -0.5}, {"max", 0.1}, {"inclusive", int64_t{1}}},
      Attrs{{"min", 0.1}},                             // between two floats, where rounding the bound
      Attrs{{"max", 0.1}, {"inclusive", int64_t{1}}},  // to the nearest float would change the mask
      Attrs{{"min", -0.1}, {"max", 1e300}},            // a bound beyond the float range
      Attrs{{"min", -HUGE_VAL}, {"max", HUGE_VAL}},    // infinite bounds
      Attrs{{"inclusive", int64_t{1}}},
      Attrs{},
  };
  uint32_t seed = 100;
  // Odd lengths (vector tails), and one above the cpu kernels' threading threshold.
  for (const Shape& shape : {Shape{7}, Shape{3, 41}, Shape{2, 3, 70001}}) {
    const size_t n = static_cast<size_t>(numel(shape));
    for (const Attrs& a : bounds) {
      const std::vector<float> v = values_with_kinks(n, ++seed, -1.0f, 7.0f, {0.0f, 6.0f, 0.1f, -0.1f});
      check_against_ref("cpu", {"ClipMask", {values(shape, v)}, a});
    }
    std::mt19937 gen(++seed);
    std::vector<uint8_t> mask(n);
    for (uint8_t& m : mask) m = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 3)(gen) == 0 ? 0 : 1);
    if (n > 3) mask[3] = 200;  // any nonzero byte is set
    // The harness compares NaN with NaN but not infinities (inf - inf): dy stays finite here; the
    // bit-for-bit case above covers infinite dy on cpu.
    std::vector<float> dy = random_floats(n, ++seed);
    dy[n / 2] = kNaN;
    check_against_ref("cpu", {"MaskGrad", {values(shape, dy), u8s(shape, mask)}});
  }
}
