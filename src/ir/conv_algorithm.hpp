// The cpu backend's ways to run a dense convolution, as `pockc tune` measures them and
// `pockc compile --profile` records them per op (attribute "cpu_algorithm" of Conv2d,
// Conv2dGradInput and ConvTranspose2d). One list of names shared by the schemas (which reject
// any other value), the profile, the compiler and the cpu kernels; other backends ignore the
// attribute. Absent: the cpu backend's measured rule (kernels/cpu/conv/conv2d.cpp).
#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace pock {

enum class ConvAlgorithm { kIm2col, kWinograd, kXnnpack, kDepthwise, kPointwise };

inline constexpr const char* kConvAlgorithmAttr = "cpu_algorithm";

// Every algorithm, in the order `pockc tune` tries them.
inline constexpr std::array<ConvAlgorithm, 5> kConvAlgorithms = {ConvAlgorithm::kIm2col, ConvAlgorithm::kWinograd,
                                                                 ConvAlgorithm::kXnnpack, ConvAlgorithm::kDepthwise,
                                                                 ConvAlgorithm::kPointwise};

inline const char* conv_algorithm_name(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kWinograd: return "winograd";
    case ConvAlgorithm::kXnnpack: return "xnnpack";
    case ConvAlgorithm::kDepthwise: return "depthwise";
    case ConvAlgorithm::kPointwise: return "pointwise";
    case ConvAlgorithm::kIm2col: break;
  }
  return "im2col";
}

// nullopt for a name that is none of the above.
inline std::optional<ConvAlgorithm> parse_conv_algorithm(std::string_view name) {
  for (ConvAlgorithm a : kConvAlgorithms) {
    if (name == conv_algorithm_name(a)) return a;
  }
  return std::nullopt;
}

// The op types that carry the attribute: their cpu kernels choose between these algorithms.
inline bool has_conv_algorithms(std::string_view op) {
  return op == "Conv2d" || op == "Conv2dGradInput" || op == "ConvTranspose2d";
}

// "im2col, winograd, xnnpack, depthwise or pointwise", for messages.
inline constexpr const char* kConvAlgorithmNames = "im2col, winograd, xnnpack, depthwise or pointwise";

}  // namespace pock
