// The fused activation of Conv2d, Linear and the BatchNorms on the cuda backend (attribute
// "activation", ir/activation.hpp), callable on host and device: apply_activation's expressions,
// so NaN passes through as the separate Relu / Relu6 let it.
#pragma once
#include "ir/activation.hpp"
#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

POCK_HD float activate(Activation a, float v) {
  if (a == Activation::kRelu) return v < 0.0f ? 0.0f : v;
  if (a == Activation::kRelu6) return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
  return v;
}

}  // namespace pock::cuda
