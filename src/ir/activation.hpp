// The activation epilogue that Conv2d and Linear may carry (attribute "activation"): the fusion
// pass folds a following Relu / Relu6 into the producing op so that the pre-activation tensor is
// never written. One definition of the names and of the math, shared by the schemas, the compiler
// and every kernel, so that a fused op computes bit for bit what the separate ops compute.
#pragma once
#include <optional>
#include <string_view>

namespace pock {

enum class Activation { kNone, kRelu, kRelu6 };

// Attribute absent or "none" -> kNone; an unknown name -> nullopt (the schema rejects it).
inline std::optional<Activation> parse_activation(std::string_view name) {
  if (name.empty() || name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  if (name == "relu6") return Activation::kRelu6;
  return std::nullopt;
}

inline const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kRelu: return "relu";
    case Activation::kRelu6: return "relu6";
    case Activation::kNone: break;
  }
  return "none";
}

// Same expressions as the Relu / Relu6 kernels: NaN fails every comparison and passes through.
inline float apply_activation(Activation a, float v) {
  switch (a) {
    case Activation::kRelu: return v < 0.0f ? 0.0f : v;
    case Activation::kRelu6: return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case Activation::kNone: break;
  }
  return v;
}

}  // namespace pock
