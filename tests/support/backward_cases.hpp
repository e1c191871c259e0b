// Test support: the cases shared by the backend-vs-ref tests of the backward and optimizer ops
// (tests/ops/test_cpu_backward.cpp, tests/ops/test_neon_backend.cpp): convolution geometries,
// update-op inputs, labels. Each test decides which backend it expects a case to bind to.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "support/backend_compare.hpp"

namespace pock::test {

using Ints = std::vector<int64_t>;

// Every activation gradient op, with the range of its forward value (past every kink and
// saturation) that a test draws inputs from.
struct ActivationGradCase {
  const char* op;
  float lo, hi;
  Attrs attrs;
};

inline std::vector<ActivationGradCase> activation_grad_cases() {
  return {
      {"ReluGrad", -3.0f, 3.0f, {}},
      {"Relu6Grad", -3.0f, 9.0f, {}},
      {"LeakyReluGrad", -3.0f, 3.0f, {{"alpha", 0.2}}},
      {"ClipGrad", -3.0f, 3.0f, {{"min", -1.0}, {"max", 2.0}}},
      {"ClipGrad", -3.0f, 3.0f, {{"max", 0.5}}},
      {"GeluGrad", -8.0f, 8.0f, {}},
      {"GeluGrad", -8.0f, 8.0f, {{"approximate", std::string("tanh")}}},
      {"SiluGrad", -12.0f, 12.0f, {}},
      {"HardSwishGrad", -5.0f, 5.0f, {}},
      {"HardSigmoidGrad", -5.0f, 5.0f, {}},
      {"AbsGrad", -2.0f, 2.0f, {}},
      {"SigmoidGrad", 0.0f, 1.0f, {}},
      {"TanhGrad", -1.0f, 1.0f, {}},
  };
}

struct ConvShape {
  int64_t batch, channels, height, width, out_channels, kernel_h, kernel_w, groups;
  Ints strides, pads, dilations;

  int64_t out_h() const { return (height + pads[0] + pads[2] - dilations[0] * (kernel_h - 1) - 1) / strides[0] + 1; }
  int64_t out_w() const { return (width + pads[1] + pads[3] - dilations[1] * (kernel_w - 1) - 1) / strides[1] + 1; }
  Shape x() const { return {batch, channels, height, width}; }
  Shape w() const { return {out_channels, channels / groups, kernel_h, kernel_w}; }
  Shape dy() const { return {batch, out_channels, out_h(), out_w()}; }
  bool depthwise() const { return groups > 1 && channels == groups; }
  Attrs attrs() const {
    Attrs a;
    a.set("strides", strides);
    a.set("pads", pads);
    a.set("dilations", dilations);
    a.set("groups", groups);
    return a;
  }
};

// The forward Conv2d of a shape with a bias and a fused activation ("none", "relu", "relu6"): what
// the tests of the cpu convolution algorithms check next to the shape's input gradient.
inline OpCase conv_forward_case(const ConvShape& s, bool frozen_weight, const char* activation, uint32_t seed) {
  OpCase c{"Conv2d",
           {input(s.x(), seed), frozen_weight ? frozen(s.w(), seed + 1) : input(s.w(), seed + 1),
            input({s.out_channels}, seed + 2, -4.0f, 4.0f)},  // moves outputs across relu6's 0 and 6
           s.attrs()};
  c.attrs.set("activation", std::string(activation));
  return c;
}

inline OpCase grad_input_case(const ConvShape& s, bool frozen_weight, uint32_t seed) {
  OpCase c{"Conv2dGradInput",
           {input(s.dy(), seed), frozen_weight ? frozen(s.w(), seed + 1) : input(s.w(), seed + 1)},
           s.attrs()};
  c.attrs.set("input_shape", s.x());
  return c;
}

inline OpCase grad_weight_case(const ConvShape& s, int64_t channels, uint32_t seed) {
  OpCase c{"Conv2dGradWeight", {input(s.x(), seed), input(s.dy(), seed + 1)}, s.attrs()};
  c.attrs.set("kernel", Ints{s.kernel_h, s.kernel_w});
  if (channels > 0) c.attrs.set("channels", channels);
  return c;
}

// A few convolutions of each kind on a random input extent: dense, strided, pointwise, grouped,
// dilated and depthwise (strides 1, 2, 3; multiplier 2).
inline std::vector<ConvShape> conv_shapes(std::mt19937& gen) {
  const int64_t h = random_dim(gen, 5, 15), w = random_dim(gen, 5, 15), c = 2 * random_dim(gen, 1, 4);
  return {
      {1, c, h, w, 8, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // same padding
      {2, c, h, w, 5, 3, 3, 1, {2, 2}, {1, 1, 0, 0}, {1, 1}},      // strided, asymmetric padding
      {2, c, h, w, 6, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},      // pointwise: GEMM on the planes
      {1, c, h, w, 4, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},      // strided pointwise
      {2, c, h, w, 6, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // grouped
      {1, c, h, w, 4, 3, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}},      // dilated
      {1, c, h, w, 3, 5, 3, 1, {1, 2}, {2, 1, 2, 1}, {1, 1}},      // rectangular kernel, mixed strides
      {2, c, h, w, c, 3, 3, c, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // depthwise
      {1, c, h, w, c, 3, 3, c, {2, 2}, {1, 1, 1, 1}, {1, 1}},      // depthwise, strided
      {2, c, h, w, 2 * c, 5, 5, c, {1, 1}, {2, 2, 2, 2}, {1, 1}},  // depthwise, multiplier 2
      {1, c, h, w, c, 3, 3, c, {1, 2}, {0, 2, 1, 0}, {2, 1}},      // depthwise, dilated, odd padding
      {1, c, h, w, c, 7, 7, c, {3, 3}, {3, 3, 3, 3}, {1, 1}},      // depthwise, stride 3
  };
}

// (param, grad, step, state...) for an update op; `updated` lists what the op writes in place.
// trained_rows > 0 makes it a partial-channel update: grad and state cover the parameter's first
// trained_rows rows, and the other rows must come out untouched.
inline OpCase update_case(const char* op, const Shape& shape, int64_t step, int state_count, bool clip, Attrs attrs,
                          uint32_t seed, int64_t trained_rows = 0) {
  Shape trained = shape;
  if (trained_rows > 0) trained[0] = trained_rows;
  OpCase c{op, {input(shape, seed), input(trained, seed + 1), int64s({}, {step})}, std::move(attrs)};
  c.updated_inputs = {0, 1};
  for (int i = 0; i < state_count; ++i) {
    // Adam's second moment is positive and, as in training, of the order of the squared first
    // moment: an update then moves the parameter by at most a few lr, which f32 computes to a
    // few 1e-7. Momentum buffers and first moments may be anything.
    const bool second_moment = std::string(op) == "AdamUpdate" && i == 1;
    c.inputs.push_back(input(trained, seed + 2 + static_cast<uint32_t>(i), second_moment ? 0.1f : -1.0f, 1.0f));
    c.updated_inputs.push_back(3 + i);
  }
  if (clip) {
    if (state_count == 0) c.inputs.push_back(omitted());
    c.inputs.push_back(values({}, {0.25f}));
  }
  // An update moves the parameter by lr * O(1): compare it at f32 precision, not at 1e-4.
  c.tolerance = 4e-6;
  return c;
}

inline std::vector<int64_t> random_labels(std::mt19937& gen, int64_t count, int64_t classes, int64_t ignore_every = 0) {
  std::vector<int64_t> labels(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    labels[static_cast<size_t>(i)] = ignore_every && i % ignore_every == 1 ? -100 : random_dim(gen, 0, classes - 1);
  }
  return labels;
}

}  // namespace pock::test
