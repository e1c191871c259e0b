// How a scatter combines an update with the value already in its slot, chosen at compile time so
// that the scatter loops carry no per-element switch. Same arithmetic as ref's combine().
#pragma once
#include <algorithm>
#include <type_traits>

#include "kernels/params/gather_scatter.hpp"

namespace pock::cpu {

template <params::ScatterReduction R, typename T>
inline T scatter_combine(T old, T update) {
  using params::ScatterReduction;
  if constexpr (R == ScatterReduction::kAdd) return static_cast<T>(old + update);
  if constexpr (R == ScatterReduction::kMul) return static_cast<T>(old * update);
  if constexpr (R == ScatterReduction::kMax) return std::max(old, update);
  if constexpr (R == ScatterReduction::kMin) return std::min(old, update);
  return update;
}

// Calls fn(std::integral_constant<ScatterReduction, r>{}): the run-time reduction made a template
// argument once per call.
template <typename Fn>
inline void with_reduction(params::ScatterReduction r, Fn&& fn) {
  using params::ScatterReduction;
  switch (r) {
    case ScatterReduction::kNone: fn(std::integral_constant<ScatterReduction, ScatterReduction::kNone>{}); break;
    case ScatterReduction::kAdd: fn(std::integral_constant<ScatterReduction, ScatterReduction::kAdd>{}); break;
    case ScatterReduction::kMul: fn(std::integral_constant<ScatterReduction, ScatterReduction::kMul>{}); break;
    case ScatterReduction::kMax: fn(std::integral_constant<ScatterReduction, ScatterReduction::kMax>{}); break;
    case ScatterReduction::kMin: fn(std::integral_constant<ScatterReduction, ScatterReduction::kMin>{}); break;
  }
}

}  // namespace pock::cpu
