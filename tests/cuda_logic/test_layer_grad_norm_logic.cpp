// The CUDA norm backward logic (kernels/cuda/layer_grad_norm_logic.hpp) on the host, rows and
// channels by each_row and the column terms summed by a plain loop, against the reference kernels.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/layer_grad_norm_logic.hpp"
#include "kernels/params/norm.hpp"

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

void expect_outputs_close(const std::vector<HostBuffer>& got, const std::vector<HostBuffer>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], "output " + std::to_string(i), 5e-4, 2e-4);
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
        const Shape stats(shape.begin(), shape.end() - 1);  // one per row: x's leading dims
        std::vector<InputSlot> inputs;
        inputs.push_back(random_f32(shape, ++seed));               // dy
        inputs.push_back(random_f32(shape, ++seed, -3.0f, 3.0f));  // x
        if (layer) inputs.push_back(random_f32(stats, ++seed, -0.5f, 0.5f));  // mean
        inputs.push_back(random_f32(stats, ++seed, 0.5f, 2.0f));             // invstd / invrms
        inputs.push_back(affine ? random_f32({features}, ++seed, 0.5f, 1.5f) : absent());
        BoundOp bound(op, std::move(inputs), {{"axis", static_cast<int64_t>(shape.size()) - 1}});
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        auto in = [&](int i) { return data_of(d.inputs[i]); };
        auto out = [&](int i) { return data_of(d.outputs[i]); };
        if (layer) {
          each_row(cuda::LayerNormGradRow{in(0), in(1), in(2), in(3), in(4), out(0), features}, rows);
          float* const outs[] = {out(1), out(2)};
          column_sums(cuda::LayerNormGradColumns{in(0), in(1), in(2), in(3), features}, rows, features, outs);
        } else {
          each_row(cuda::RmsNormGradRow{in(0), in(1), in(2), in(3), out(0), features}, rows);
          float* const outs[] = {out(1)};
          column_sums(cuda::RmsNormGradColumns{in(0), in(1), in(2), features}, rows, features, outs);
        }
        INFO(op << " shape " << shape_str(shape) << (affine ? " with gamma" : " without gamma"));
        expect_outputs_close(got, want);
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
        HostBuffer dy = random_f32(shape, ++seed);
        // y: probabilities (Softmax) or log-probabilities (LogSoftmax)
        HostBuffer y = log ? random_f32(shape, ++seed, -6.0f, 0.0f) : random_f32(shape, ++seed, 0.0f, 1.0f);
        BoundOp bound(op, {dy, y}, {{"axis", int64_t{axis}}});
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        const params::AxisSplit s = parsed<params::AxisNormParams>(d).around(d.inputs[1]);
        const cuda::AxisRows rows{s.extent, s.inner};
        float *in0 = data_of(d.inputs[0]), *in1 = data_of(d.inputs[1]), *out = data_of(d.outputs[0]);
        if (log) {
          each_row(cuda::SoftmaxGradRow<true>{in0, in1, out, rows}, s.outer * s.inner);
        } else {
          each_row(cuda::SoftmaxGradRow<false>{in0, in1, out, rows}, s.outer * s.inner);
        }
        INFO(op << " shape " << shape_str(shape) << " axis " << axis);
        expect_outputs_close(got, want);
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
        std::vector<InputSlot> inputs = {random_f32(shape, ++seed), random_f32(shape, ++seed, -2.0f, 2.0f),
                                         random_f32({channels}, ++seed, -0.5f, 0.5f),
                                         random_f32({channels}, ++seed, 0.5f, 2.0f)};
        if (with_dx) inputs.push_back(affine ? random_f32({channels}, ++seed, 0.5f, 1.5f) : absent());
        BoundOp bound(op, std::move(inputs));
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        auto in = [&](int i) { return data_of(d.inputs[i]); };
        const int first = with_dx ? 1 : 0;
        each_row(cuda::BatchNormGradChannel{in(0), in(1), in(2), in(3), with_dx ? in(4) : nullptr,
                                            with_dx ? data_of(d.outputs[0]) : nullptr, data_of(d.outputs[first]),
                                            data_of(d.outputs[first + 1]),
                                            cuda::channel_view(shape.data(), static_cast<int>(shape.size()))},
                 channels);
        INFO(op << " shape " << shape_str(shape));
        expect_outputs_close(got, want);
      }
    }
  }
}
