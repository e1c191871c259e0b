// Reference kernels for the elementwise family (f32; Cast, Identity and Where for their dtypes;
// Maximum, Minimum, Pow, Mod and Fmod also on i8, u8, i32, i64 and f16; Add, Sub, Mul, Div and
// those five on f64, i16, u16, u32 and u64, Neg and Abs on f64).
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
  const pock_tensor_desc* ins[2] = {&c.in(0), &c.in(1)};
  if constexpr (std::is_same_v<S, float>) {
    if (c.out(0).dtype == POCK_BF16) {  // output_dtype "bf16": f32 results rounded as Cast rounds
      uint16_t* y = c.out_data<uint16_t>(0);
      ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) { y[o] = float_to_bf16(Op()(a[i], b[j])); });
      return Status::ok();
    }
  }
  S* y = c.out_data<S>(0);
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

// Integer arithmetic that wraps runs in an unsigned type at least as wide as int, so that neither
// signed overflow nor the promotion of u16 to (signed) int is undefined.
template <typename T>
using Wrapping = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// base^exp in integers, wrapping as unsigned arithmetic does; a negative exponent truncates 1/base^|exp|
// toward zero, as onnxruntime's std::pow cast back to the integer does.
template <typename T>
T integer_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? T{1} : base == -1 ? (exp % 2 ? T{-1} : T{1}) : T{0};
  }
  using U = Wrapping<T>;
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

// Writes element i of Gelu's output: f32, or bf16 (attribute output_dtype, the bf16 copy of a GEMM
// operand: src/compiler/lowering/bf16_producers.hpp), rounded as Cast rounds.
void store_f32_result(const KernelCall& c, int64_t i, float v) {
  if (c.out(0).dtype == POCK_BF16) c.out_data<uint16_t>(0)[i] = float_to_bf16(v);
  else c.out_data<float>(0)[i] = v;
}

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
  const int64_t n = numel(c.out(0));
  const bool tanh_form = p.tanh_gelu;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    if (tanh_form) {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      store_f32_result(c, i, static_cast<float>(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)))));
    } else {
      store_f32_result(c, i, static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))));
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

// Cast between two integer dtypes goes through 64-bit integers (exact, wrapping as C++ and numpy
// do); any cast that involves a float dtype goes through double, exact for every value of the
// narrower side.
template <typename T>
T element(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}

bool is_integer(pock_dtype dt) { return dt != POCK_F32 && dt != POCK_F16 && dt != POCK_BF16 && dt != POCK_F64; }

// Every integer dtype's value as int64 (u64 above INT64_MAX keeps its bits).
int64_t load_integer(const void* p, int64_t i, pock_dtype dt) {
  switch (dt) {
    case POCK_I32: return element<int32_t>(p, i);
    case POCK_I64: return element<int64_t>(p, i);
    case POCK_I8: return element<int8_t>(p, i);
    case POCK_U8: return element<uint8_t>(p, i);
    case POCK_BOOL: return element<bool>(p, i) ? 1 : 0;
    case POCK_I16: return element<int16_t>(p, i);
    case POCK_U16: return element<uint16_t>(p, i);
    case POCK_U32: return element<uint32_t>(p, i);
    case POCK_U64: return static_cast<int64_t>(element<uint64_t>(p, i));
    default: return 0;
  }
}

double load(const void* p, int64_t i, pock_dtype dt) {
  switch (dt) {
    case POCK_F32: return element<float>(p, i);
    case POCK_F64: return element<double>(p, i);
    case POCK_F16: return half_to_float(element<uint16_t>(p, i));
    case POCK_BF16: return bf16_to_float(element<uint16_t>(p, i));
    case POCK_U64: return static_cast<double>(element<uint64_t>(p, i));
    default: return static_cast<double>(load_integer(p, i, dt));
  }
}

template <typename T>
void put(void* p, int64_t i, T v) {
  static_cast<T*>(p)[i] = v;
}

void store_integer(void* p, int64_t i, pock_dtype dt, int64_t v) {
  switch (dt) {
    case POCK_I32: put(p, i, static_cast<int32_t>(v)); break;
    case POCK_I64: put(p, i, v); break;
    case POCK_I8: put(p, i, static_cast<int8_t>(v)); break;
    case POCK_U8: put(p, i, static_cast<uint8_t>(v)); break;
    case POCK_BOOL: put(p, i, v != 0); break;
    case POCK_I16: put(p, i, static_cast<int16_t>(v)); break;
    case POCK_U16: put(p, i, static_cast<uint16_t>(v)); break;
    case POCK_U32: put(p, i, static_cast<uint32_t>(v)); break;
    case POCK_U64: put(p, i, static_cast<uint64_t>(v)); break;
    default: break;
  }
}

// A float to an integer dtype: truncated toward zero to int64, then wrapped to the dtype, which is
// what numpy's astype does on x86 for every value int64 holds (NaN gives 0 and values beyond
// int64 saturate, where C++ leaves the result undefined). u64 keeps its upper half.
template <typename T>
T float_to_integer(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (v != v) return T{0};
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (v >= kTwo63) return v >= 2 * kTwo63 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(v);
  }
  if (v >= kTwo63) return static_cast<T>(std::numeric_limits<int64_t>::max());
  if (v < -kTwo63) return static_cast<T>(std::numeric_limits<int64_t>::min());
  return static_cast<T>(static_cast<int64_t>(v));
}

void store(void* p, int64_t i, pock_dtype dt, double v) {
  switch (dt) {
    case POCK_F32: put(p, i, static_cast<float>(v)); break;
    case POCK_F64: put(p, i, v); break;
    // Through f32, as PyTorch converts to its half types: exact for f32 inputs and for integers
    // within f16's range.
    case POCK_F16: put(p, i, float_to_half(static_cast<float>(v))); break;
    case POCK_BF16: put(p, i, float_to_bf16(static_cast<float>(v))); break;
    case POCK_BOOL: put(p, i, v != 0.0); break;
    case POCK_I32: put(p, i, float_to_integer<int32_t>(v)); break;
    case POCK_I64: put(p, i, float_to_integer<int64_t>(v)); break;
    case POCK_I8: put(p, i, float_to_integer<int8_t>(v)); break;
    case POCK_U8: put(p, i, float_to_integer<uint8_t>(v)); break;
    case POCK_I16: put(p, i, float_to_integer<int16_t>(v)); break;
    case POCK_U16: put(p, i, float_to_integer<uint16_t>(v)); break;
    case POCK_U32: put(p, i, float_to_integer<uint32_t>(v)); break;
    case POCK_U64: put(p, i, float_to_integer<uint64_t>(v)); break;
    default: break;
  }
}

Status cast(const KernelCall& c) {
  const pock_dtype from = c.in(0).dtype, to = c.out(0).dtype;
  if (from == to) return identity(c);
  const bool integers = is_integer(from) && is_integer(to);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) {
    if (integers) store_integer(c.out(0).data, i, to, load_integer(c.in(0).data, i, from));
    else store(c.out(0).data, i, to, load(c.in(0).data, i, from));
  }
  return Status::ok();
}

template <typename T, typename Op>
Status unary_typed(const KernelCall& c) {
  const T* x = c.in_data<T>(0);
  T* y = c.out_data<T>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = Op()(x[i]);
  return Status::ok();
}
struct NegOp { template <typename T> T operator()(T x) const { return -x; } };
struct AbsOp { template <typename T> T operator()(T x) const { return std::fabs(x); } };

// f64's four arithmetic ops (the integer dtypes get theirs from add_typed_binaries).
void add_f64_arithmetic(KernelTable& t) {
  using E = Plain<double>;
  t.add({"Add", DType::kF64, binary<AddOp, E>});
  t.add({"Sub", DType::kF64, binary<SubOp, E>});
  t.add({"Mul", DType::kF64, binary<MulOp, E>});
  t.add({"Div", DType::kF64, binary<DivOp, E>});
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

// f64 and the wider / 16-bit integers ONNX graphs compute in (no training: no f64 activation ops).
void register_ref_inference_dtypes(KernelTable& t) {
  add_f64_arithmetic(t);
  add_typed_binaries<Plain<double>>(t, DType::kF64);
  add_typed_binaries<Plain<int16_t>>(t, DType::kI16);
  add_typed_binaries<Plain<uint16_t>>(t, DType::kU16);
  add_typed_binaries<Plain<uint32_t>>(t, DType::kU32);
  add_typed_binaries<Plain<uint64_t>>(t, DType::kU64);
  t.add({"Neg", DType::kF64, unary_typed<double, NegOp>});
  t.add({"Abs", DType::kF64, unary_typed<double, AbsOp>});
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
  register_ref_inference_dtypes(t);
}

}  // namespace pock
