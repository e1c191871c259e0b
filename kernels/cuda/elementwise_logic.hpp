// Per-element logic of the cuda elementwise family, the same expressions as kernels/ref/elementwise.cpp
// in f32 (ref's Gelu works in double; here f32 with the C library's erff/tanhf, within a few ulp).
// The math goes through the C functions (expf, tanhf, ...) that both nvcc's device library and
// the host's libm provide, so the host tests run this very code.
#pragma once
#include <math.h>

#include <cstdint>
#include <cstring>

#include "kernels/cuda/float_map.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::cuda {

// The attributes the activations read, narrowed to f32 once on the host.
struct UnaryArgs {
  float alpha = 0.01f, beta = 0.0f;
  float lo = -INFINITY, hi = INFINITY;
  bool tanh_gelu = false;
};

inline UnaryArgs unary_args(const params::ActivationParams& p) {
  UnaryArgs a;
  a.alpha = static_cast<float>(p.alpha);
  a.beta = static_cast<float>(p.beta);
  a.lo = static_cast<float>(p.lo);
  a.hi = static_cast<float>(p.hi);
  a.tanh_gelu = p.tanh_gelu;
  return a;
}

// Clamp that lets NaN through, as ref (and PyTorch) do.
POCK_HD float clamp_nan(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
POCK_HD float sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
POCK_HD float hardsigmoid_f(float x) { return clamp_nan(x / 6.0f + 0.5f, 0.0f, 1.0f); }

#define POCK_UNARY(Name, expr) \
  struct Name {                \
    static POCK_HD float apply(float x, const UnaryArgs& a) { (void)a; return expr; } \
  };
POCK_UNARY(NegOp, -x)
POCK_UNARY(ExpOp, expf(x))
POCK_UNARY(LogOp, logf(x))
POCK_UNARY(SqrtOp, sqrtf(x))
POCK_UNARY(RsqrtOp, 1.0f / sqrtf(x))  // not rsqrtf: that one is approximate on the device
POCK_UNARY(AbsOp, fabsf(x))
POCK_UNARY(ReciprocalOp, 1.0f / x)
POCK_UNARY(SquareOp, x * x)
POCK_UNARY(ReluOp, x < 0.0f ? 0.0f : x)
POCK_UNARY(Relu6Op, clamp_nan(x, 0.0f, 6.0f))
POCK_UNARY(SigmoidOp, sigmoid_f(x))
POCK_UNARY(TanhOp, tanhf(x))
POCK_UNARY(SiluOp, x / (1.0f + expf(-x)))
POCK_UNARY(HardSigmoidOp, hardsigmoid_f(x))
POCK_UNARY(HardSwishOp, x * hardsigmoid_f(x))
POCK_UNARY(LeakyReluOp, x > 0.0f ? x : a.alpha * x)
POCK_UNARY(ClipOp, clamp_nan(x, a.lo, a.hi))
POCK_UNARY(ScaleShiftOp, x * a.alpha + a.beta)
#undef POCK_UNARY

struct GeluOp {
  static POCK_HD float apply(float x, const UnaryArgs& a) {
    if (a.tanh_gelu) {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
  }
};

struct NoArgs {};

#define POCK_BINARY(Name, expr) \
  struct Name {                 \
    static POCK_HD float apply(float a, float b, const NoArgs&) { return expr; } \
  };
POCK_BINARY(AddOp, a + b)
POCK_BINARY(SubOp, a - b)
POCK_BINARY(MulOp, a * b)
POCK_BINARY(DivOp, a / b)
POCK_BINARY(PowOp, powf(a, b))
// NaN wins, as in torch.maximum / torch.minimum: a diverging value must not be hidden.
POCK_BINARY(MaximumOp, (a > b || a != a) ? a : b)
POCK_BINARY(MinimumOp, (a < b || a != a) ? a : b)
#undef POCK_BINARY

// The one list of the f32 ops, read by elementwise.cu's registration and by the logic test.
#define POCK_CUDA_UNARY_OPS(X)                                                                    \
  X("Neg", NegOp) X("Exp", ExpOp) X("Log", LogOp) X("Sqrt", SqrtOp) X("Rsqrt", RsqrtOp)           \
  X("Abs", AbsOp) X("Reciprocal", ReciprocalOp) X("Square", SquareOp) X("Relu", ReluOp)           \
  X("Relu6", Relu6Op) X("Sigmoid", SigmoidOp) X("Tanh", TanhOp) X("Silu", SiluOp)                 \
  X("HardSigmoid", HardSigmoidOp) X("HardSwish", HardSwishOp) X("LeakyRelu", LeakyReluOp)         \
  X("Clip", ClipOp) X("ScaleShift", ScaleShiftOp) X("Gelu", GeluOp)
#define POCK_CUDA_BINARY_OPS(X)                                                                   \
  X("Add", AddOp) X("Sub", SubOp) X("Mul", MulOp) X("Div", DivOp) X("Pow", PowOp)                 \
  X("Maximum", MaximumOp) X("Minimum", MinimumOp)

// ---- Where: cond ? a : b over three broadcast operands, any branch width ------------------------

template <typename T>
struct WhereMap {
  const uint8_t* cond;
  const T* a;
  const T* b;
  T* out;
  StridedIndex<3> index;

  POCK_HD void operator()(int64_t i) const {
    out[i] = cond[index.offset(0, i)] ? a[index.offset(1, i)] : b[index.offset(2, i)];
  }
};

// ---- Cast: as ref does (kernels/ref/elementwise.cpp), for every dtype but f16/bf16 -------------
// Between two integer dtypes through int64 (exact, wrapping); any cast with a float side through
// double, a float to an integer truncated toward zero to int64 first, then wrapped (NaN gives 0,
// values beyond int64 saturate, u64 keeps its upper half), as numpy's astype does on x86. C++'s
// own float-to-integer conversion is undefined out of range, hence the explicit steps.

POCK_HD bool cast_is_integer(int32_t dtype) {
  return dtype != POCK_F32 && dtype != POCK_F64 && dtype != POCK_F16 && dtype != POCK_BF16;
}

template <typename T>
POCK_HD T cast_element(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}

// Every integer dtype's value as int64 (u64 above INT64_MAX keeps its bits).
POCK_HD int64_t load_as_integer(const void* p, int64_t i, int32_t dtype) {
  switch (dtype) {
    case POCK_I32: return cast_element<int32_t>(p, i);
    case POCK_I64: return cast_element<int64_t>(p, i);
    case POCK_I8: return cast_element<int8_t>(p, i);
    case POCK_U8: return cast_element<uint8_t>(p, i);
    case POCK_BOOL: return cast_element<uint8_t>(p, i) ? 1 : 0;
    case POCK_I16: return cast_element<int16_t>(p, i);
    case POCK_U16: return cast_element<uint16_t>(p, i);
    case POCK_U32: return cast_element<uint32_t>(p, i);
    case POCK_U64: return static_cast<int64_t>(cast_element<uint64_t>(p, i));
    default: return 0;
  }
}

POCK_HD double load_as_double(const void* p, int64_t i, int32_t dtype) {
  switch (dtype) {
    case POCK_F32: return cast_element<float>(p, i);
    case POCK_F64: return cast_element<double>(p, i);
    case POCK_U64: return static_cast<double>(cast_element<uint64_t>(p, i));
    default: return static_cast<double>(load_as_integer(p, i, dtype));
  }
}

template <typename T>
POCK_HD void cast_put(void* p, int64_t i, T v) {
  static_cast<T*>(p)[i] = v;
}

// The low bytes of `v` (two's complement), as C++20 defines the narrowing.
POCK_HD void store_integer(void* p, int64_t i, int32_t dtype, int64_t v) {
  switch (dtype) {
    case POCK_I32: cast_put(p, i, static_cast<int32_t>(v)); break;
    case POCK_I64: cast_put(p, i, v); break;
    case POCK_I8: cast_put(p, i, static_cast<int8_t>(v)); break;
    case POCK_U8: cast_put(p, i, static_cast<uint8_t>(v)); break;
    case POCK_BOOL: cast_put(p, i, static_cast<uint8_t>(v != 0 ? 1 : 0)); break;
    case POCK_I16: cast_put(p, i, static_cast<int16_t>(v)); break;
    case POCK_U16: cast_put(p, i, static_cast<uint16_t>(v)); break;
    case POCK_U32: cast_put(p, i, static_cast<uint32_t>(v)); break;
    case POCK_U64: cast_put(p, i, static_cast<uint64_t>(v)); break;
    default: break;
  }
}

// A float's integer value for store_integer: NaN 0, truncated toward zero, saturated to int64.
POCK_HD int64_t truncated_integer(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (v != v) return 0;
  if (v >= kTwo63) return INT64_MAX;
  if (v < -kTwo63) return INT64_MIN;
  return static_cast<int64_t>(v);
}

POCK_HD void store_from_double(void* p, int64_t i, int32_t dtype, double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  switch (dtype) {
    case POCK_F32: cast_put(p, i, static_cast<float>(v)); break;
    case POCK_F64: cast_put(p, i, v); break;
    case POCK_BOOL: cast_put(p, i, static_cast<uint8_t>(v != 0.0 ? 1 : 0)); break;
    case POCK_U64:  // [2^63, 2^64) keeps its upper half; beyond saturates
      if (v >= kTwo63) {
        cast_put(p, i, v >= 2 * kTwo63 ? UINT64_MAX : static_cast<uint64_t>(v));
        break;
      }
      store_integer(p, i, dtype, truncated_integer(v));
      break;
    default: store_integer(p, i, dtype, truncated_integer(v)); break;
  }
}

// The dtype switch is the same for every thread of a launch, so it costs no divergence.
struct CastMap {
  const void* in;
  void* out;
  int32_t from, to;
  POCK_HD void operator()(int64_t i) const {
    if (cast_is_integer(from) && cast_is_integer(to)) {
      store_integer(out, i, to, load_as_integer(in, i, from));
    } else {
      store_from_double(out, i, to, load_as_double(in, i, from));
    }
  }
};

// The dtypes ref's Cast and Where carry (no f16/bf16).
inline bool cast_dtype_supported(int32_t dtype) { return dtype != POCK_F16 && dtype != POCK_BF16; }

}  // namespace pock::cuda
