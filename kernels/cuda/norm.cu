// The CUDA norm family: LayerNorm and RMSNorm (a warp or a block per row, statistics saved when the
// node has those outputs), Softmax and LogSoftmax (a team per row along the last axis; along
// another, a thread per strided row when rows are many: launch_axis_rows), BatchNorm
// (element-wise) and BatchNormTrain (a block per channel). The math is norm_logic.hpp's, checked
// against ref on the host by tests/cuda_logic/test_norm_logic.cpp.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/norm_logic.hpp"
#include "kernels/cuda/row_team.cuh"
#include "kernels/params/norm.hpp"

namespace pock::cuda {
namespace {

template <typename T>
const T* optional_input(const KernelCall& c, int i) {
  return c.has_input(i) ? c.in_data<T>(i) : nullptr;
}

// A statistics output the node may leave out (or leave unbound).
template <typename T>
T* optional_output(const KernelCall& c, int i) {
  return c.num_outputs() > i ? c.out_data<T>(i) : nullptr;
}

Status layer_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const params::RowSplit s = p.rows(c.in(0));
  const LayerNormRow row{c.in_data<float>(0),        optional_input<float>(c, 1), optional_input<float>(c, 2),
                         c.out_data<float>(0),       optional_output<float>(c, 1), optional_output<float>(c, 2),
                         s.features,                 static_cast<float>(p.eps)};
  return launched(c, launch_rows(s.rows, s.features, current_stream(), row));
}

Status rms_norm(const KernelCall& c, const params::AxisNormParams& p) {
  const params::RowSplit s = p.rows(c.in(0));
  const RmsNormRow row{c.in_data<float>(0),  optional_input<float>(c, 1), c.out_data<float>(0),
                       optional_output<float>(c, 1), s.features,          static_cast<float>(p.eps)};
  return launched(c, launch_rows(s.rows, s.features, current_stream(), row));
}

template <bool kLog>
Status softmax(const KernelCall& c, const params::AxisNormParams& p) {
  const params::AxisSplit s = p.around(c.in(0));
  const SoftmaxRow<kLog> row{c.in_data<float>(0), c.out_data<float>(0), AxisRows{s.extent, s.inner}};
  return launched(c, launch_axis_rows(s.outer * s.inner, s.extent, s.inner, current_stream(), row));
}

Status batch_norm(const KernelCall& c, const params::BatchNormParams& p) {
  const ChannelView v = channel_view(c.in(0).dims, c.in(0).rank);
  const BatchNormElement element{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2),
                                 c.in_data<float>(3), c.in_data<float>(4), c.out_data<float>(0),
                                 v.channels,          v.inner,             static_cast<float>(p.eps),
                                 p.activation};
  return launched(c, launch_map(numel(c.in(0)), current_stream(), element));
}

Status batch_norm_train(const KernelCall& c, const params::BatchNormParams& p) {
  const ChannelView v = channel_view(c.in(0).dims, c.in(0).rank);
  if (v.count() < 2) return c.error("training needs more than one value per channel");
  const BatchNormTrainChannel channel{c.in_data<float>(0),    c.in_data<float>(1),    c.in_data<float>(2),
                                      c.inout_data<float>(3), c.inout_data<float>(4), c.out_data<float>(0),
                                      c.out_data<float>(1),   c.out_data<float>(2),   v,
                                      static_cast<float>(p.eps), static_cast<float>(p.momentum), p.activation};
  return launched(c, launch_rows(v.channels, v.count(), current_stream(), channel));
}

}  // namespace

void register_norm(KernelTable& t) {
  t.add(typed_kernel<params::BatchNormParams, batch_norm>("BatchNorm", DType::kF32));
  t.add(typed_kernel<params::BatchNormParams, batch_norm_train>("BatchNormTrain", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, layer_norm>("LayerNorm", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, rms_norm>("RMSNorm", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax<false>>("Softmax", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax<true>>("LogSoftmax", DType::kF32));
}

}  // namespace pock::cuda
