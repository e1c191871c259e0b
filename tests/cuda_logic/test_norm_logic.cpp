// The CUDA norm family's row and channel logic (kernels/cuda/norm_logic.hpp) on the host, rows on
// a thread team and on a SoloTeam (each_row), against the reference kernels on random inputs.
#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/norm_logic.hpp"
#include "kernels/params/norm.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// LayerNorm / RMSNorm of x over dims [axis, rank), with or without the affine inputs and the
// saved statistics (optional outputs).
void check_row_norm(const char* op, const Shape& shape, int axis, bool affine, bool stats, uint32_t seed, float offset) {
  const Shape normalized(shape.begin() + axis, shape.end());
  const bool layer = std::string(op) == "LayerNorm";
  std::vector<InputSlot> inputs = {random_f32(shape, seed, offset - 2.0f, offset + 2.0f),
                                   affine ? random_f32(normalized, seed + 1, 0.5f, 1.5f) : absent()};
  if (layer) inputs.push_back(affine ? random_f32(normalized, seed + 2) : absent());
  Attrs attrs{{"axis", int64_t{axis}}};
  if (seed % 2) attrs.set("eps", 1e-3);
  BoundOp bound(op, std::move(inputs), attrs);
  REQUIRE(bound.status().is_ok());
  bound.use_outputs(stats ? 3 : 1);
  const std::vector<HostBuffer> want = bound.run_ref();
  std::vector<HostBuffer> got = bound.fresh_outputs();
  const pock_op_desc d = bound.bind(got);
  const auto p = parsed<params::AxisNormParams>(d);
  const params::RowSplit s = p.rows(d.inputs[0]);
  const float eps = static_cast<float>(p.eps);
  auto out = [&](int i) { return i < d.num_outputs ? data_of(d.outputs[i]) : nullptr; };
  if (layer) {
    each_row(cuda::LayerNormRow{data_of(d.inputs[0]), data_of(d.inputs[1]), data_of(d.inputs[2]), out(0), out(1),
                                out(2), s.features, eps},
             s.rows);
  } else {
    each_row(cuda::RmsNormRow{data_of(d.inputs[0]), data_of(d.inputs[1]), out(0), out(1), s.features, eps}, s.rows);
  }
  INFO(op << " shape " << shape_str(shape) << " axis " << axis << " affine " << affine << " stats " << stats);
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], "output " + std::to_string(i), 2e-4, 1e-4);
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
          check_row_norm(op, shape, axis, affine, stats, ++seed, offset);
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
        std::vector<float> x = random_values(shape, ++seed, -8.0f, 8.0f, false);
        x[0] = -INFINITY;  // a masked score
        BoundOp bound(op, {f32(shape, x)}, {{"axis", int64_t{axis}}});
        REQUIRE(bound.status().is_ok());
        const std::vector<HostBuffer> want = bound.run_ref();
        std::vector<HostBuffer> got = bound.fresh_outputs();
        const pock_op_desc d = bound.bind(got);
        const params::AxisSplit s = parsed<params::AxisNormParams>(d).around(d.inputs[0]);
        const cuda::AxisRows rows{s.extent, s.inner};
        if (std::string(op) == "Softmax") {
          each_row(cuda::SoftmaxRow<false>{data_of(d.inputs[0]), data_of(d.outputs[0]), rows}, s.outer * s.inner);
        } else {
          each_row(cuda::SoftmaxRow<true>{data_of(d.inputs[0]), data_of(d.outputs[0]), rows}, s.outer * s.inner);
        }
        INFO(op << " shape " << shape_str(shape) << " axis " << axis);
        expect_close(got[0], want[0], "y", 1e-4, 1e-6);
      }
    }
  }
}

TEST_CASE("cuda BatchNorm and BatchNormTrain logic matches ref, with their fused activations", "[cuda_logic][norm]") {
  const std::pair<const char*, const char*> kCases[] = {{"none", "BatchNorm"},  {"none", "BatchNormTrain"},
                                                        {"relu", "BatchNorm"},  {"relu6", "BatchNormTrain"},
                                                        {"relu6", "BatchNorm"}, {"relu", "BatchNormTrain"}};
  uint32_t seed = 200;
  for (const Shape& shape : {Shape{4, 3, 5, 7}, Shape{2, 16}, Shape{3, 2, 300}}) {
    const int64_t channels = shape[1];
    for (const auto& [activation, op] : kCases) {
      const bool train = std::string(op) == "BatchNormTrain";
      std::vector<InputSlot> inputs = {random_f32(shape, ++seed, 8.0f, 12.0f), random_f32({channels}, ++seed, 0.5f, 1.5f),
                                       random_f32({channels}, ++seed), random_f32({channels}, ++seed),
                                       random_f32({channels}, ++seed, 0.5f, 2.0f)};
      BoundOp bound(op, std::move(inputs), {{"momentum", 0.25}, {"activation", std::string(activation)}});
      REQUIRE(bound.status().is_ok());
      std::vector<HostBuffer> want_in;
      const std::vector<HostBuffer> want = bound.run_ref(&want_in);
      std::vector<HostBuffer> in = bound.fresh_inputs(), got = bound.fresh_outputs();
      const pock_op_desc d = bound.bind(in, got);
      const auto p = parsed<params::BatchNormParams>(d);
      const cuda::ChannelView v = cuda::channel_view(shape.data(), static_cast<int>(shape.size()));
      auto x = [&](int i) { return data_of(d.inputs[i]); };
      if (train) {
        each_row(cuda::BatchNormTrainChannel{x(0), x(1), x(2), x(3), x(4), data_of(d.outputs[0]), data_of(d.outputs[1]),
                                             data_of(d.outputs[2]), v, static_cast<float>(p.eps),
                                             static_cast<float>(p.momentum), p.activation},
                 v.channels);
      } else {
        each_element(cuda::BatchNormElement{x(0), x(1), x(2), x(3), x(4), data_of(d.outputs[0]), v.channels, v.inner,
                                            static_cast<float>(p.eps), p.activation},
                     numel(shape));
      }
      INFO(op << " shape " << shape_str(shape) << " activation " << activation);
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], "output " + std::to_string(i), 2e-4, 1e-4);
      // The running statistics are updated in place.
      expect_close(in[3], want_in[3], "running_mean");
      expect_close(in[4], want_in[4], "running_var");
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
