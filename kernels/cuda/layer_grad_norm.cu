// The CUDA norm backward ops: LayerNormGrad and RMSNormGrad (dx a team per row; dgamma, dbeta as
// deterministic column sums through the workspace reserved at prepare), SoftmaxGrad and
// LogSoftmaxGrad (a team per row, or a thread per strided row: launch_axis_rows),
// BatchNormTrainGrad and BatchNormParamGrad (a block per channel). The math is
// layer_grad_norm_logic.hpp's, checked against ref on the host by
// tests/cuda_logic/test_layer_grad_norm_logic.cpp.
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/layer_grad_norm_logic.hpp"
#include "kernels/cuda/row_team.cuh"
#include "kernels/params/norm.hpp"

namespace pock::cuda {
namespace {

// x seen as [rows, features], features being dgamma's (the normalized, trailing) extent, as ref.
struct RowLayout {
  int64_t rows = 0, features = 0;
};

RowLayout row_layout(const pock_op_desc& op) {
  const int64_t features = numel(op.outputs[1]);
  return {features > 0 ? numel(op.inputs[1]) / features : 0, features};
}

// Reserves what the column sums of `kTerms` outputs need; the op keeps no state of its own.
template <int kTerms>
Status reserve_column_sums(const pock_op_desc& op, void** state) {
  *state = nullptr;
  const RowLayout l = row_layout(op);
  return reserve_workspace(column_sum_scratch(kTerms, l.rows, l.features));
}

Status layer_norm_grad(const KernelCall& c) {
  const RowLayout l = row_layout(*c.desc);
  const float* gamma = c.has_input(4) ? c.in_data<float>(4) : nullptr;
  const LayerNormGradRow row{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2), c.in_data<float>(3),
                             gamma,               c.out_data<float>(0), l.features};
  if (Status s = launched(c, launch_rows(l.rows, l.features, current_stream(), row)); !s.is_ok()) return s;
  const LayerNormGradColumns columns{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2),
                                     c.in_data<float>(3), l.features};
  return launched(c, launch_column_sums(l.rows, l.features, columns, {{c.out_data<float>(1), c.out_data<float>(2)}},
                                        static_cast<float*>(workspace()), current_stream()));
}

Status rms_norm_grad(const KernelCall& c) {
  const RowLayout l = row_layout(*c.desc);
  const float* gamma = c.has_input(3) ? c.in_data<float>(3) : nullptr;
  const RmsNormGradRow row{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2),
                           gamma,               c.out_data<float>(0), l.features};
  if (Status s = launched(c, launch_rows(l.rows, l.features, current_stream(), row)); !s.is_ok()) return s;
  const RmsNormGradColumns columns{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2), l.features};
  return launched(c, launch_column_sums(l.rows, l.features, columns, {{c.out_data<float>(1)}},
                                        static_cast<float*>(workspace()), current_stream()));
}

template <bool kLog>
Status softmax_grad(const KernelCall& c, const params::AxisNormParams& p) {
  const params::AxisSplit s = p.around(c.in(1));
  const SoftmaxGradRow<kLog> row{c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0),
                                 AxisRows{s.extent, s.inner}};
  return launched(c, launch_axis_rows(s.outer * s.inner, s.extent, s.inner, current_stream(), row));
}

// BatchNormTrainGrad(dy, x, mean, invstd, gamma?) -> dx, dgamma, dbeta, and
// BatchNormParamGrad(dy, x, mean, invstd) -> dgamma, dbeta.
template <bool kWithDx>
Status batch_norm_grad(const KernelCall& c) {
  const ChannelView v = channel_view(c.in(1).dims, c.in(1).rank);
  const int first = kWithDx ? 1 : 0;  // dgamma's output index
  const BatchNormGradChannel channel{c.in_data<float>(0),
                                     c.in_data<float>(1),
                                     c.in_data<float>(2),
                                     c.in_data<float>(3),
                                     kWithDx && c.has_input(4) ? c.in_data<float>(4) : nullptr,
                                     kWithDx ? c.out_data<float>(0) : nullptr,
                                     c.out_data<float>(first),
                                     c.out_data<float>(first + 1),
                                     v};
  return launched(c, launch_rows(v.channels, v.count(), current_stream(), channel));
}

KernelDef with_column_sums(const char* op, KernelFn run, KernelPrepareFn prepare) {
  KernelDef d;
  d.op = op;
  d.dtype = DType::kF32;
  d.run = run;
  d.prepare = prepare;
  return d;
}

}  // namespace

void register_layer_grad_norm(KernelTable& t) {
  t.add({"BatchNormTrainGrad", DType::kF32, batch_norm_grad<true>});
  t.add({"BatchNormParamGrad", DType::kF32, batch_norm_grad<false>});
  t.add(with_column_sums("LayerNormGrad", layer_norm_grad, reserve_column_sums<2>));
  t.add(with_column_sums("RMSNormGrad", rms_norm_grad, reserve_column_sums<1>));
  t.add(typed_kernel<params::AxisNormParams, softmax_grad<false>>("SoftmaxGrad", DType::kF32));
  t.add(typed_kernel<params::AxisNormParams, softmax_grad<true>>("LogSoftmaxGrad", DType::kF32));
}

}  // namespace pock::cuda
