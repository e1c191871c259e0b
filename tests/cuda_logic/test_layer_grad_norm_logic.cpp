// The CUDA norm backward logic (kernels/cuda/layer_grad_norm_logic.hpp) on the host, one SoloTeam
// per row or channel and the column terms summed by a plain loop, against the reference kernels.
#include <catch2/catch.hpp>

#include "kernels/cuda/layer_grad_norm_logic.hpp"
#include "kernels/params/norm.hpp"
#include "ref_case.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// What column_sum.cuh computes on the device: out_k[j] = sum over rows of terms(r, j)_k.
template <typename Terms>
void column_sums(const Terms& terms, int64_t rows, int64_t columns, float* const* outs) {
  for (int64_t j = 0; j < columns; ++j) {
    float acc[Terms::kTerms] = {};
    for (int64_t r = 0; r < rows; ++r) {
      float t[Terms::kTerms];
      terms(r, j, t);
      for (int k = 0; k < Terms::kTerms; ++k) acc[k] += t[k];
    }
    for (int k = 0; k < Terms::kTerms; ++k) outs[k][j] = acc[k];
  }
}

void expect_outputs_close(RefCase& actual, RefCase& expected) {
  for (size_t i = 0; i < actual.outputs.size(); ++i) {
    expect_close(actual.outputs[i], expected.outputs[i], "output " + std::to_string(i), 5e-4f, 2e-4f);
  }
}

}  // namespace

TEST_CASE("cuda LayerNormGrad and RMSNormGrad logic matches ref", "[cuda_logic][layer_grad_norm]") {
  uint32_t seed = 300;
  for (const char* op : {"LayerNormGrad", "RMSNormGrad"}) {
    const bool layer = std::string(op) == "LayerNormGrad";
    for (const Shape& shape : {Shape{3, 5, 37}, Shape{600, 64}, Shape{2, 1500}}) {
      for (bool affine : {true, false}) {
        const int64_t features = shape.back();
        const int64_t rows = numel(shape) / features;
        RefCase expected;
        expected.op = op;
        expected.inputs.push_back(random_f32(shape, ++seed));               // dy
        expected.inputs.push_back(random_f32(shape, ++seed, -3.0f, 3.0f));  // x
        if (layer) expected.inputs.push_back(random_f32({rows}, ++seed, -0.5f, 0.5f));  // mean
        expected.inputs.push_back(random_f32({rows}, ++seed, 0.5f, 2.0f));             // invstd / invrms
        expected.inputs.push_back(affine ? random_f32({features}, ++seed, 0.5f, 1.5f) : absent());
        expected.outputs.push_back(tensor(DType::kF32, shape));
        expected.outputs.push_back(tensor(DType::kF32, {features}));
        if (layer) expected.outputs.push_back(tensor(DType::kF32, {features}));
        expected.set_int("axis", static_cast<int64_t>(shape.size()) - 1);
        RefCase actual = expected;
        REQUIRE(run_ref(expected).is_ok());
        std::vector<CaseTensor>& in = actual.inputs;
        std::vector<CaseTensor>& out = actual.outputs;
        if (layer) {
          each_row(cuda::LayerNormGradRow{in[0].f32(), in[1].f32(), in[2].f32(), in[3].f32(), optional_data(in[4]),
                                          out[0].f32(), features},
                   rows);
          float* const outs[] = {out[1].f32(), out[2].f32()};
          column_sums(cuda::LayerNormGradColumns{in[0].f32(), in[1].f32(), in[2].f32(), in[3].f32(), features}, rows,
                      features, outs);
        } else {
          each_row(cuda::RmsNormGradRow{in[0].f32(), in[1].f32(), in[2].f32(), optional_data(in[3]), out[0].f32(),
                                        features},
                   rows);
          float* const outs[] = {out[1].f32()};
          column_sums(cuda::RmsNormGradColumns{in[0].f32(), in[1].f32(), in[2].f32(), features}, rows, features, outs);
        }
        INFO(op << " shape " << shape_str(shape) << (affine ? " with gamma" : " without gamma"));
        expect_outputs_close(actual, expected);
      }
    }
  }
}

TEST_CASE("cuda SoftmaxGrad and LogSoftmaxGrad logic matches ref on every axis", "[cuda_logic][layer_grad_norm]") {
  uint32_t seed = 400;
  for (const char* op : {"SoftmaxGrad", "LogSoftmaxGrad"}) {
    const bool log = std::string(op) == "LogSoftmaxGrad";
    for (const Shape& shape : {Shape{3, 7, 33}, Shape{2, 2000}}) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        RefCase expected;
        expected.op = op;
        expected.inputs.push_back(random_f32(shape, ++seed));
        // y: probabilities (Softmax) or log-probabilities (LogSoftmax)
        expected.inputs.push_back(log ? random_f32(shape, ++seed, -6.0f, 0.0f) : random_f32(shape, ++seed, 0.0f, 1.0f));
        expected.outputs.push_back(tensor(DType::kF32, shape));
        expected.set_int("axis", axis);
        RefCase actual = expected;
        REQUIRE(run_ref(expected).is_ok());
        const auto p = parsed<params::AxisNormParams>(actual);
        const params::AxisSplit s = p.around(actual.desc().inputs[1]);
        const cuda::AxisRows rows{s.extent, s.inner};
        std::vector<CaseTensor>& in = actual.inputs;
        if (log) {
          each_row(cuda::SoftmaxGradRow<true>{in[0].f32(), in[1].f32(), actual.outputs[0].f32(), rows}, s.outer * s.inner);
        } else {
          each_row(cuda::SoftmaxGradRow<false>{in[0].f32(), in[1].f32(), actual.outputs[0].f32(), rows},
                   s.outer * s.inner);
        }
        INFO(op << " shape " << shape_str(shape) << " axis " << axis);
        expect_outputs_close(actual, expected);
      }
    }
  }
}

TEST_CASE("cuda BatchNormTrainGrad and BatchNormParamGrad logic matches ref", "[cuda_logic][layer_grad_norm]") {
  uint32_t seed = 500;
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{2, 16}, Shape{3, 2, 300}}) {
    const int64_t channels = shape[1];
    for (const char* op : {"BatchNormTrainGrad", "BatchNormParamGrad"}) {
      const bool with_dx = std::string(op) == "BatchNormTrainGrad";
      for (bool affine : {true, false}) {
        if (!with_dx && !affine) continue;  // ParamGrad takes no gamma
        RefCase expected;
        expected.op = op;
        expected.inputs = {random_f32(shape, ++seed), random_f32(shape, ++seed, -2.0f, 2.0f),
                           random_f32({channels}, ++seed, -0.5f, 0.5f), random_f32({channels}, ++seed, 0.5f, 2.0f)};
        if (with_dx) {
          expected.inputs.push_back(affine ? random_f32({channels}, ++seed, 0.5f, 1.5f) : absent());
          expected.outputs.push_back(tensor(DType::kF32, shape));
        }
        expected.outputs.push_back(tensor(DType::kF32, {channels}));
        expected.outputs.push_back(tensor(DType::kF32, {channels}));
        RefCase actual = expected;
        REQUIRE(run_ref(expected).is_ok());
        std::vector<CaseTensor>& in = actual.inputs;
        std::vector<CaseTensor>& out = actual.outputs;
        const int first = with_dx ? 1 : 0;
        each_row(cuda::BatchNormGradChannel{in[0].f32(), in[1].f32(), in[2].f32(), in[3].f32(),
                                            with_dx ? optional_data(in[4]) : nullptr, with_dx ? out[0].f32() : nullptr,
                                            out[first].f32(), out[first + 1].f32(),
                                            cuda::channel_view(shape.data(), static_cast<int>(shape.size()))},
                 channels);
        INFO(op << " shape " << shape_str(shape));
        expect_outputs_close(actual, expected);
      }
    }
  }
}
