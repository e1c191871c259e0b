// Reference kernels for the elementwise family (f32; Cast, Identity and Where for their dtypes;
// Maximum, Minimum, Pow, Mod and Fmod also on i8, u8, i32, i64 and f16; Add, Sub, Mul and Div
// also on i8, u8, i32 and i64).
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include "ir/float16.hpp"
#include "kernels/params/elementwise.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using ref::Half;
using ref::Plain;

template <typename Op, typename E = Plain<float>>
Status binary(const KernelCall& c) {
  using S = typename E::Stored;
  const S* a = c.in_data<S>(0);
  const S* b = c.in_data<S>(1);
  S* y = c.out_data<S>(0);
  const pock_tensor_desc* ins[2] = {&c.in(0), &c.in(1)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) { y[o] = E::store(Op()(E::load(a[i]), E::load(b[j]))); });
  return Status::ok();
}

// Integer division by zero has no value: the kernel refuses it, naming the element, before
// writing anything. Float division gives inf or NaN as IEEE says.
template <typename Op, typename E>
Status integer_division(const KernelCall& c) {
  using S = typename E::Stored;
  const S* b = c.in_data<S>(1);
  for (int64_t j = 0, n = numel(c.in(1)); j < n; ++j) {
    if (b[j] == 0) return c.error("integer division by zero: element " + std::to_string(j) + " of the divisor is 0");
  }
  return binary<Op, E>(c);
}

// base^exp in integers, wrapping as unsigned arithmetic does; a negative exponent truncates 1/base^|exp|
// toward zero, as onnxruntime's std::pow cast back to the integer does.
template <typename T>
T integer_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? T{1} : base == -1 ? (exp % 2 ? T{-1} : T{1}) : T{0};
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, factor = static_cast<U>(base);
  for (T e = exp; e > 0; e /= 2) {
    if (e % 2) result *= factor;
    factor *= factor;
  }
  return static_cast<T>(result);
}

// Integers wrap around on overflow, as numpy and onnxruntime do: the arithmetic runs on unsigned
// values of at least unsigned int's width, where wrapping is defined (signed overflow is not, and
// narrower unsigned types would promote to signed int), and is cast back.
template <typename T, typename F>
T wrapping(T a, T b, F f) {
  using Narrow = std::make_unsigned_t<T>;
  using Wide = std::common_type_t<Narrow, unsigned>;
  return static_cast<T>(static_cast<Narrow>(f(static_cast<Wide>(static_cast<Narrow>(a)), static_cast<Wide>(static_cast<Narrow>(b)))));
}
struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapping(a, b, [](auto x, auto y) { return x + y; });
    else return a + b;
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapping(a, b, [](auto x, auto y) { return x - y; });
    else return a - b;
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrapping(a, b, [](auto x, auto y) { return x * y; });
    else return a * b;
  }
};
// Integer division truncates toward zero (C++, onnxruntime, and ONNX's uint8 test data); MIN / -1
// wraps to MIN as the negation does in two's complement.
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) return b == -1 ? SubOp()(T{0}, a) : static_cast<T>(a / b);
    else return static_cast<T>(a / b);
  }
};
struct PowOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return integer_pow(a, b);
    else return std::pow(a, b);
  }
};
// NaN wins, as in torch.maximum / torch.minimum: a diverging value must not be hidden.
struct MaxOp { template <typename T> T operator()(T a, T b) const { return (a > b || a != a) ? a : b; } };
struct MinOp { template <typename T> T operator()(T a, T b) const { return (a < b || a != a) ? a : b; } };
// ONNX Mod with fmod = 1: C's truncated remainder, the sign of the dividend. x % -1 is 0 (and
// INT_MIN % -1 would overflow).
struct FmodOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) return b == -1 ? T{0} : static_cast<T>(a % b);
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(a % b);
    else return std::fmod(a, b);
  }
};
// ONNX Mod with fmod = 0: Python's floored remainder, the sign of the divisor.
struct ModOp {
  template <typename T>
  T operator()(T a, T b) const {
    const T r = FmodOp()(a, b);
    if constexpr (std::is_unsigned_v<T>) return r;  // both signs are +
    else return r != 0 && (r < 0) != (b < 0) ? static_cast<T>(r + b) : r;
  }
};
struct PReluOp { float operator()(float x, float slope) const { return x > 0.0f ? x : x * slope; } };

// Clamp that lets NaN through (std::fmin / std::fmax would replace it by a bound, as PyTorch does not).
float clamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

template <float (*F)(float)>
Status unary(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const int64_t n = numel(c.out(0));
  for (int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
  return Status::ok();
}

float neg(float x) { return -x; }
float exp_(float x) { return std::exp(x); }
float log_(float x) { return std::log(x); }
float sqrt_(float x) { return std::sqrt(x); }
float rsqrt(float x) { return 1.0f / std::sqrt(x); }
float abs_(float x) { return std::fabs(x); }
float reciprocal(float x) { return 1.0f / x; }
float square(float x) { return x * x; }
float relu(float x) { return x < 0.0f ? 0.0f : x; }
float relu6(float x) { return clamp(x, 0.0f, 6.0f); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float tanh_(float x) { return std::tanh(x); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float hardsigmoid(float x) { return clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); }
float hardswish(float x) { return x * hardsigmoid(x); }

Status gelu(const KernelCall& c, const params::ActivationParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const int64_t n = numel(c.out(0));
  const bool tanh_form = p.tanh_gelu;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    if (tanh_form) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      y[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
    } else {
      y[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    }
  }
  return Status::ok();
}

Status leaky_relu(const KernelCall& c, const params::ActivationParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const float alpha = static_cast<float>(p.alpha);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
  return Status::ok();
}

// The activations with ONNX attributes, in double: y = F(x, p).
template <double (*F)(double, const params::ActivationParams&)>
Status unary_with_params(const KernelCall& c, const params::ActivationParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = static_cast<float>(F(x[i], p));
  return Status::ok();
}

double elu(double x, const params::ActivationParams& p) { return x > 0.0 ? x : p.alpha * std::expm1(x); }
double selu(double x, const params::ActivationParams& p) { return p.gamma * elu(x, p); }
double celu(double x, const params::ActivationParams& p) { return x > 0.0 ? x : p.alpha * std::expm1(x / p.alpha); }
// log(1 + e^x) without overflow: x + log(1 + e^-x) for positive x.
double softplus(double x, const params::ActivationParams&) {
  return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double softsign(double x, const params::ActivationParams&) { return x / (1.0 + std::fabs(x)); }
double thresholded_relu(double x, const params::ActivationParams& p) { return x > p.alpha ? x : 0.0; }
double mish(double x, const params::ActivationParams& p) { return x * std::tanh(softplus(x, p)); }

Status clip(const KernelCall& c, const params::ActivationParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const float lo = static_cast<float>(p.lo);
  const float hi = static_cast<float>(p.hi);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = clamp(x[i], lo, hi);
  return Status::ok();
}

Status scale_shift(const KernelCall& c, const params::ActivationParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const float alpha = static_cast<float>(p.alpha);
  const float beta = static_cast<float>(p.beta);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = x[i] * alpha + beta;
  return Status::ok();
}

Status identity(const KernelCall& c) {
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  return Status::ok();
}

template <typename T>
Status where(const KernelCall& c) {
  const bool* cond = c.in_data<bool>(0);
  const T* a = c.in_data<T>(1);
  const T* b = c.in_data<T>(2);
  T* y = c.out_data<T>(0);
  const pock_tensor_desc* ins[3] = {&c.in(0), &c.in(1), &c.in(2)};
  ref::for_each_broadcast<3>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j, int64_t k) { y[o] = cond[i] ? a[j] : b[k]; });
  return Status::ok();
}

Status where_any(const KernelCall& c) {
  switch (c.in(1).dtype) {
    case POCK_F32: return where<float>(c);
    case POCK_I32: return where<int32_t>(c);
    case POCK_I64: return where<int64_t>(c);
    case POCK_BOOL: case POCK_I8: case POCK_U8: return where<uint8_t>(c);
    case POCK_F16: case POCK_BF16: return where<uint16_t>(c);
    default: return c.error("Where has no kernel for this branch dtype");
  }
}

// Cast through double: exact for every pair of the integer, f32, f16 and bf16 dtypes we carry.
double load(const void* p, int64_t i, pock_dtype dt) {
  switch (dt) {
    case POCK_F32: return static_cast<const float*>(p)[i];
    case POCK_I32: return static_cast<const int32_t*>(p)[i];
    case POCK_I64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case POCK_I8: return static_cast<const int8_t*>(p)[i];
    case POCK_U8: return static_cast<const uint8_t*>(p)[i];
    case POCK_BOOL: return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    case POCK_F16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case POCK_BF16: return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
    default: return 0.0;
  }
}

void store(void* p, int64_t i, pock_dtype dt, double v) {
  switch (dt) {
    case POCK_F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case POCK_I32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case POCK_I64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case POCK_I8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case POCK_U8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case POCK_BOOL: static_cast<bool*>(p)[i] = v != 0.0; break;
    // Through f32, as PyTorch converts to its half types: exact for f32 inputs and for integers
    // within f16's range.
    case POCK_F16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
    case POCK_BF16: static_cast<uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(v)); break;
    default: break;
  }
}

Status cast(const KernelCall& c) {
  // I64 -> I64 etc. copies exactly; through double only where values fit (indices, labels, masks).
  if (c.in(0).dtype == c.out(0).dtype) return identity(c);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) store(c.out(0).data, i, c.out(0).dtype, load(c.in(0).data, i, c.in(0).dtype));
  return Status::ok();
}

// The ops that run on integers and f16, with division by zero refused for integers.
template <typename E>
void add_typed_binaries(KernelTable& t, DType dt) {
  constexpr bool kInteger = std::is_integral_v<typename E::Stored> && !std::is_same_v<E, Half>;
  t.add({"Maximum", dt, binary<MaxOp, E>});
  t.add({"Minimum", dt, binary<MinOp, E>});
  t.add({"Pow", dt, binary<PowOp, E>});
  t.add({"Mod", dt, kInteger ? integer_division<ModOp, E> : binary<ModOp, E>});
  t.add({"Fmod", dt, kInteger ? integer_division<FmodOp, E> : binary<FmodOp, E>});
  if constexpr (kInteger) {
    t.add({"Add", dt, binary<AddOp, E>});
    t.add({"Sub", dt, binary<SubOp, E>});
    t.add({"Mul", dt, binary<MulOp, E>});
    t.add({"Div", dt, integer_division<DivOp, E>});
  }
}

}  // namespace

void register_ref_elementwise(KernelTable& t) {
  t.add({"Add", DType::kF32, binary<AddOp>});
  t.add({"Sub", DType::kF32, binary<SubOp>});
  t.add({"Mul", DType::kF32, binary<MulOp>});
  t.add({"Div", DType::kF32, binary<DivOp>});
  t.add({"Pow", DType::kF32, binary<PowOp>});
  t.add({"Maximum", DType::kF32, binary<MaxOp>});
  t.add({"Minimum", DType::kF32, binary<MinOp>});
  t.add({"Neg", DType::kF32, unary<neg>});
  t.add({"Exp", DType::kF32, unary<exp_>});
  t.add({"Log", DType::kF32, unary<log_>});
  t.add({"Sqrt", DType::kF32, unary<sqrt_>});
  t.add({"Rsqrt", DType::kF32, unary<rsqrt>});
  t.add({"Abs", DType::kF32, unary<abs_>});
  t.add({"Reciprocal", DType::kF32, unary<reciprocal>});
  t.add({"Square", DType::kF32, unary<square>});
  t.add({"Relu", DType::kF32, unary<relu>});
  t.add({"Relu6", DType::kF32, unary<relu6>});
  t.add({"Sigmoid", DType::kF32, unary<sigmoid>});
  t.add({"Tanh", DType::kF32, unary<tanh_>});
  t.add({"Silu", DType::kF32, unary<silu>});
  t.add({"HardSigmoid", DType::kF32, unary<hardsigmoid>});
  t.add({"HardSwish", DType::kF32, unary<hardswish>});
  t.add(typed_kernel<params::ActivationParams, gelu>("Gelu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, leaky_relu>("LeakyRelu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, clip>("Clip", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<elu>>("Elu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<selu>>("Selu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<celu>>("Celu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<softplus>>("Softplus", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<softsign>>("Softsign", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<thresholded_relu>>("ThresholdedRelu", DType::kF32));
  t.add(typed_kernel<params::ActivationParams, unary_with_params<mish>>("Mish", DType::kF32));
  t.add({"PRelu", DType::kF32, binary<PReluOp>});
  t.add(typed_kernel<params::ActivationParams, scale_shift>("ScaleShift", DType::kF32));
  for (int i = 0; i < kNumDTypes; ++i) {
    t.add({"Identity", static_cast<DType>(i), identity});
    t.add({"Cast", static_cast<DType>(i), cast});
  }
  // Max, Min and Pow on the integers (i8, u8, i32, i64) and f16 as ONNX allows them; Mod (fmod = 0) and Fmod (fmod = 1) on
  // f32, f16 and integers. ONNX imports its integer and f16 tensors with these dtypes.
  t.add({"Mod", DType::kF32, binary<ModOp>});
  t.add({"Fmod", DType::kF32, binary<FmodOp>});
  add_typed_binaries<Plain<int8_t>>(t, DType::kI8);
  add_typed_binaries<Plain<uint8_t>>(t, DType::kU8);
  add_typed_binaries<Plain<int32_t>>(t, DType::kI32);
  add_typed_binaries<Plain<int64_t>>(t, DType::kI64);
  add_typed_binaries<Half>(t, DType::kF16);
  t.add({"Where", DType::kBool, where_any});
}

}  // namespace pock
