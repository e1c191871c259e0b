// The math_unary family: one definition of each elementwise function, shared by the ref and cpu
// kernels (in float) and by the ONNX importer's constant folding (in double), and the typed
// parameters of the ops that have attributes. Names and meanings are ONNX's (operators.md).
#pragma once
#include <cmath>
#include <cstdint>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::math_unary {

struct Acos { template <typename T> T operator()(T v) const { return std::acos(v); } };
struct Asin { template <typename T> T operator()(T v) const { return std::asin(v); } };
struct Atan { template <typename T> T operator()(T v) const { return std::atan(v); } };
struct Acosh { template <typename T> T operator()(T v) const { return std::acosh(v); } };
struct Asinh { template <typename T> T operator()(T v) const { return std::asinh(v); } };
struct Atanh { template <typename T> T operator()(T v) const { return std::atanh(v); } };
struct Cos { template <typename T> T operator()(T v) const { return std::cos(v); } };
struct Sin { template <typename T> T operator()(T v) const { return std::sin(v); } };
struct Tan { template <typename T> T operator()(T v) const { return std::tan(v); } };
struct Cosh { template <typename T> T operator()(T v) const { return std::cosh(v); } };
struct Sinh { template <typename T> T operator()(T v) const { return std::sinh(v); } };
struct Erf { template <typename T> T operator()(T v) const { return std::erf(v); } };
struct Floor { template <typename T> T operator()(T v) const { return std::floor(v); } };
struct Ceil { template <typename T> T operator()(T v) const { return std::ceil(v); } };
// Halves go to the even neighbour (ONNX Round, numpy.round): nearbyint in the default rounding
// mode, which pock never changes.
struct Round { template <typename T> T operator()(T v) const { return std::nearbyint(v); } };
// -1, 0 or 1; NaN stays NaN (numpy.sign), and -0 stays -0.
struct Sign {
  template <typename T>
  T operator()(T v) const { return v > T(0) ? T(1) : (v < T(0) ? T(-1) : v); }
};

// The functions above, each an op of the same name with one float input and a float output of
// its shape. The one list that schemas, kernels, gradients, folding and the importer walk.
#define POCK_MATH_UNARY_FUNCTIONS(X) \
  X(Acos) X(Asin) X(Atan) X(Acosh) X(Asinh) X(Atanh) X(Cos) X(Sin) X(Tan) X(Cosh) X(Sinh) X(Erf) \
  X(Floor) X(Ceil) X(Round) X(Sign)

// ONNX Shrink: x + bias below -lambd, x - bias above lambd, 0 between (bounds included).
template <typename T>
T shrink(T x, T lambd, T bias) {
  return x < -lambd ? x + bias : (x > lambd ? x - bias : T(0));
}

}  // namespace pock::math_unary

namespace pock::params {

struct ShrinkParams {
  double lambd = 0.5;
  double bias = 0.0;
};
// IsInf: which infinities count (ONNX's detect_negative / detect_positive, both 1 by default).
struct IsInfParams {
  bool negative = true;
  bool positive = true;
};
// Hardmax: the axis of the one-hot (ONNX opset 13: the last one by default), already normalized
// against the input's rank.
struct HardmaxParams {
  int axis = -1;
};

Status parse(const pock_op_desc& op, ShrinkParams* out);
Status parse(const pock_op_desc& op, IsInfParams* out);
Status parse(const pock_op_desc& op, HardmaxParams* out);

}  // namespace pock::params
