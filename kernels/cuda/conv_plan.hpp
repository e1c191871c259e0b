// Convolutions through cuDNN's legacy API for the conv family's CUDA kernels (conv.cu,
// layer_grad_conv.cu): one plan per op, made at prepare (descriptors, the heuristic's algorithm,
// the workspace it needs reserved), run without allocating. FMA math only, no TF32: the results
// stay within f32 rounding of ref, which training parity relies on.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>

#include "kernels/cuda/conv_logic.hpp"
#include "kernels/params/conv.hpp"
#include "pock/status.hpp"

namespace pock::cuda {

// Which of cuDNN's three convolutions a plan runs.
enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

class ConvPlan {
 public:
  // Picks the algorithm (deterministic and within the workspace cap where the heuristic offers
  // one) and reports the workspace it needs; the caller reserves it.
  static Status create(ConvDirection direction, const ConvShapes& s, const params::WindowParams& p,
                       std::unique_ptr<ConvPlan>* out);
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  size_t workspace_bytes() const { return workspace_bytes_; }

  // On current_cudnn() (bound to the backend's stream); `scratch` holds workspace_bytes().
  Status forward(const float* x, const float* w, float* y, void* scratch) const;
  Status backward_data(const float* dy, const float* w, float* dx, void* scratch) const;
  Status backward_filter(const float* x, const float* dy, float* dw, void* scratch) const;

 private:
  ConvPlan() = default;
  Status describe(const ConvShapes& s, const params::WindowParams& p);
  Status choose(ConvDirection direction);

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  int algorithm_ = 0;  // of the plan's direction
  size_t workspace_bytes_ = 0;
};

}  // namespace pock::cuda
