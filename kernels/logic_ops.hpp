// Element semantics of the logic family, one definition for every backend's kernels and for the
// ONNX importer's folding of constant operands (src/frontend/onnx/folding_elementwise.cpp), so a
// comparison gives the same bool whether it is folded at import or run in a step.
// Comparisons follow IEEE as ONNX and numpy do: NaN is unequal to everything, itself included, and
// unordered. A bool operand is true when nonzero.
#pragma once
#include <climits>
#include <type_traits>

namespace pock::logic {

struct Equal {
  template <typename T> bool operator()(T a, T b) const { return a == b; }
};
struct Less {
  template <typename T> bool operator()(T a, T b) const { return a < b; }
};
struct LessOrEqual {
  template <typename T> bool operator()(T a, T b) const { return a <= b; }
};
struct Greater {
  template <typename T> bool operator()(T a, T b) const { return a > b; }
};
struct GreaterOrEqual {
  template <typename T> bool operator()(T a, T b) const { return a >= b; }
};
struct And {
  template <typename T> bool operator()(T a, T b) const { return a != 0 && b != 0; }
};
struct Or {
  template <typename T> bool operator()(T a, T b) const { return a != 0 || b != 0; }
};
struct Xor {
  template <typename T> bool operator()(T a, T b) const { return (a != 0) != (b != 0); }
};
struct Not {
  template <typename T> bool operator()(T a) const { return a == 0; }
};

// ONNX BitShift on unsigned integers. A shift by the type's width or more gives 0, as numpy (ONNX's
// reference) computes it; in C++ it would be undefined.
template <typename T>
T shift_left(T x, T n) {
  static_assert(std::is_unsigned_v<T>, "BitShift is defined on unsigned integers");
  return n >= sizeof(T) * CHAR_BIT ? T{0} : static_cast<T>(x << n);
}
template <typename T>
T shift_right(T x, T n) {
  static_assert(std::is_unsigned_v<T>, "BitShift is defined on unsigned integers");
  return n >= sizeof(T) * CHAR_BIT ? T{0} : static_cast<T>(x >> n);
}

}  // namespace pock::logic
