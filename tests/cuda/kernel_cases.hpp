// The cases tests/cuda runs on every kernel of the cuda table (kernels/cuda/cuda_families.def):
// written ones per family, for inputs that need a shape, a dtype or a meaning of their own, and
// generic ones (all inputs f32 of one shape, no attributes) for the plain f32 kernels no written
// case names. Tolerances: f32 kernels 1e-4 relative to |ref| + 1 — cuBLAS, cuDNN and the device
// reductions add in another order than ref's double sums (about 1e-6 on these sizes); an indexing
// or broadcasting mistake is O(0.1).
#pragma once
#include <string>
#include <vector>

#include "tests/cuda/kernel_cases_dense.hpp"
#include "tests/cuda/kernel_cases_elementwise.hpp"
#include "tests/cuda/kernel_cases_layer_grads.hpp"
#include "tests/cuda/kernel_cases_layers.hpp"
#include "tests/cuda/kernel_cases_quant.hpp"
#include "tests/cuda/kernel_cases_shape.hpp"

namespace pock::test {

// In the order of cuda_families.def.
inline std::vector<DeviceCase> written_cases() {
  std::vector<DeviceCase> cases;
  for (auto family : {linalg_cases, linear_grad_cases, training_cases, elementwise_cases, reduce_cases,
                      activation_mask_cases, elementwise_grad_cases, shape_cases, layer_grad_shape_cases, norm_cases,
                      layer_grad_norm_cases, sequence_cases, layer_grad_sequence_cases, conv_cases, layer_grad_conv_cases,
                      block_quant_cases}) {
    for (DeviceCase& c : family()) cases.push_back(std::move(c));
  }
  return cases;
}

// Generic cases for a kernel no written case names: f32 inputs of one shape, arity 1 to 3.
inline std::vector<DeviceCase> generic_cases(const std::string& op) {
  std::vector<DeviceCase> cases;
  for (int arity = 1; arity <= 3; ++arity) {
    DeviceCase c{op, {}, {}};
    for (int i = 0; i < arity; ++i) c.inputs.push_back(rnd({3, 5, 7}, 100 + static_cast<uint32_t>(i)));
    cases.push_back(c);
  }
  return cases;
}

}  // namespace pock::test
