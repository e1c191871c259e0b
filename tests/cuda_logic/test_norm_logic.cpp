// The CUDA norm family's row and channel logic (kernels/cuda/norm_logic.hpp) on the host, one
// SoloTeam per row, against the reference kernels on random inputs.
#include <catch2/catch.hpp>

#include "kernels/cuda/norm_logic.hpp"
#include "kernels/params/norm.hpp"
#include "ref_case.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// LayerNorm / RMSNorm of x over dims [axis, rank), with or without the affine inputs.
RefCase row_norm_case(const char* op, const Shape& shape, int axis, bool affine, bool stats, uint32_t seed, float offset) {
  RefCase c;
  c.op = op;
  CaseTensor x = random_f32(shape, seed, offset - 2.0f, offset + 2.0f);
  const Shape normalized(shape.begin() + axis, shape.end());
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= shape[d];
  c.inputs.push_back(x);
  const bool layer = std::string(op) == "LayerNorm";
  c.inputs.push_back(affine ? random_f32(normalized, seed + 1, 0.5f, 1.5f) : absent());
  if (layer) c.inputs.push_back(affine ? random_f32(normalized, seed + 2) : absent());
  c.outputs.push_back(tensor(DType::kF32, shape));
  if (stats) {
    c.outputs.push_back(tensor(DType::kF32, {rows}));
    if (layer) c.outputs.push_back(tensor(DType::kF32, {rows}));
  }
  c.set_int("axis", axis);
  if (seed % 2) c.set_float("eps", 1e-3);
  return c;
}

}  // namespace

TEST_CASE("cuda LayerNorm and RMSNorm row logic matches ref", "[cuda_logic][norm]") {
  uint32_t seed = 10;
  for (const char* op : {"LayerNorm", "RMSNorm"}) {
    for (const Shape& shape : {Shape{3, 5, 37}, Shape{4, 1100}, Shape{2, 3, 4, 5}, Shape{1, 1}}) {
      for (int axis : {static_cast<int>(shape.size()) - 1, 1}) {
        for (int variant = 0; variant < 3; ++variant) {
          const bool affine = variant != 1, stats = variant != 2;
          const float offset = variant == 0 ? 50.0f : 0.0f;  // a large mean must not cancel the variance
          RefCase expected = row_norm_case(op, shape, axis, affine, stats, ++seed, offset);
          RefCase actual = expected;
          REQUIRE(run_ref(expected).is_ok());
          const auto p = parsed<params::AxisNormParams>(actual);
          const params::RowSplit s = p.rows(actual.desc().inputs[0]);
          const float eps = static_cast<float>(p.eps);
          auto out = [&](size_t i) { return i < actual.outputs.size() ? actual.outputs[i].f32() : nullptr; };
          if (std::string(op) == "LayerNorm") {
            each_row(cuda::LayerNormRow{actual.inputs[0].f32(), optional_data(actual.inputs[1]),
                                        optional_data(actual.inputs[2]), out(0), out(1), out(2), s.features, eps},
                     s.rows);
          } else {
            each_row(cuda::RmsNormRow{actual.inputs[0].f32(), optional_data(actual.inputs[1]), out(0), out(1),
                                      s.features, eps},
                     s.rows);
          }
          INFO(op << " shape " << shape_str(shape) << " axis " << axis << " variant " << variant);
          for (size_t i = 0; i < actual.outputs.size(); ++i) {
            expect_close(actual.outputs[i], expected.outputs[i], "output " + std::to_string(i), 2e-4f, 1e-4f);
          }
        }
      }
    }
  }
}

TEST_CASE("cuda Softmax and LogSoftmax row logic matches ref on every axis", "[cuda_logic][norm]") {
  uint32_t seed = 100;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const Shape& shape : {Shape{3, 7, 33}, Shape{2, 2000}, Shape{5}}) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        RefCase expected;
        expected.op = op;
        expected.inputs.push_back(random_f32(shape, ++seed, -8.0f, 8.0f));
        expected.inputs[0].f32()[0] = -INFINITY;  // a masked score
        expected.outputs.push_back(tensor(DType::kF32, shape));
        expected.set_int("axis", axis);
        RefCase actual = expected;
        REQUIRE(run_ref(expected).is_ok());
        const auto p = parsed<params::AxisNormParams>(actual);
        const params::AxisSplit s = p.around(actual.desc().inputs[0]);
        const cuda::AxisRows rows{s.extent, s.inner};
        if (std::string(op) == "Softmax") {
          each_row(cuda::SoftmaxRow<false>{actual.inputs[0].f32(), actual.outputs[0].f32(), rows}, s.outer * s.inner);
        } else {
          each_row(cuda::SoftmaxRow<true>{actual.inputs[0].f32(), actual.outputs[0].f32(), rows}, s.outer * s.inner);
        }
        INFO(op << " shape " << shape_str(shape) << " axis " << axis);
        expect_close(actual.outputs[0], expected.outputs[0], "y", 1e-4f, 1e-6f);
      }
    }
  }
}

TEST_CASE("cuda BatchNorm and BatchNormTrain logic matches ref", "[cuda_logic][norm]") {
  uint32_t seed = 200;
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{2, 16}, Shape{3, 2, 300}}) {
    const int64_t channels = shape[1];
    for (const char* op : {"BatchNorm", "BatchNormTrain"}) {
      const bool train = std::string(op) == "BatchNormTrain";
      RefCase expected;
      expected.op = op;
      expected.inputs = {random_f32(shape, ++seed, 8.0f, 12.0f), random_f32({channels}, ++seed, 0.5f, 1.5f),
                         random_f32({channels}, ++seed), random_f32({channels}, ++seed),
                         random_f32({channels}, ++seed, 0.5f, 2.0f)};
      expected.outputs.push_back(tensor(DType::kF32, shape));
      if (train) {
        expected.outputs.push_back(tensor(DType::kF32, {channels}));
        expected.outputs.push_back(tensor(DType::kF32, {channels}));
      }
      expected.set_float("momentum", 0.25);
      RefCase actual = expected;
      REQUIRE(run_ref(expected).is_ok());
      const auto p = parsed<params::BatchNormParams>(actual);
      const cuda::ChannelView v = cuda::channel_view(shape.data(), static_cast<int>(shape.size()));
      std::vector<CaseTensor>& in = actual.inputs;
      std::vector<CaseTensor>& out = actual.outputs;
      if (train) {
        each_row(cuda::BatchNormTrainChannel{in[0].f32(), in[1].f32(), in[2].f32(), in[3].f32(), in[4].f32(),
                                             out[0].f32(), out[1].f32(), out[2].f32(), v, static_cast<float>(p.eps),
                                             static_cast<float>(p.momentum)},
                 v.channels);
      } else {
        const cuda::BatchNormElement element{in[0].f32(), in[1].f32(), in[2].f32(), in[3].f32(), in[4].f32(),
                                             out[0].f32(), v.channels,  v.inner,     static_cast<float>(p.eps)};
        for (int64_t i = 0; i < in[0].count(); ++i) element(i);
      }
      INFO(op << " shape " << shape_str(shape));
      for (size_t i = 0; i < out.size(); ++i) {
        expect_close(out[i], expected.outputs[i], "output " + std::to_string(i), 2e-4f, 1e-4f);
      }
      // The running statistics are updated in place.
      expect_close(in[3], expected.inputs[3], "running_mean");
      expect_close(in[4], expected.inputs[4], "running_var");
    }
  }
}

TEST_CASE("cuda ChannelView gives a team's lanes every element of a channel once", "[cuda_logic][norm]") {
  // The lanes' shares without the reductions, so a team of any width runs on the host: runs of
  // `inner` wider than the team (lanes along each run) and narrower (lanes along the channel).
  struct Lanes {
    int lane, lanes;
  };
  for (const cuda::ChannelView view : {cuda::ChannelView{3, 4, 70}, cuda::ChannelView{5, 3, 1}, cuda::ChannelView{2, 2, 31}}) {
    for (int lanes : {1, 32, 512}) {
      for (int64_t ch = 0; ch < view.channels; ++ch) {
        std::vector<int> seen(static_cast<size_t>(view.batch * view.channels * view.inner), 0);
        for (int lane = 0; lane < lanes; ++lane) view.for_each(Lanes{lane, lanes}, ch, [&](int64_t i) { ++seen[i]; });
        int64_t wrong = 0;
        for (size_t i = 0; i < seen.size(); ++i) {
          const bool in_channel = static_cast<int64_t>(i / view.inner) % view.channels == ch;
          if (seen[i] != (in_channel ? 1 : 0)) ++wrong;
        }
        INFO("inner " << view.inner << " lanes " << lanes << " channel " << ch);
        CHECK(wrong == 0);
      }
    }
  }
}
