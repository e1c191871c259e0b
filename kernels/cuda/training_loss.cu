// The training family's losses on cuda: MseLoss, MseLossGrad, SoftmaxCrossEntropy and
// SoftmaxCrossEntropyGrad (PyTorch's ignore_index and label_smoothing, as ref). Sums run as
// fixed-shape partial passes then one ordered final pass: deterministic, and in double as ref's.
// A label outside the classes cannot fail the launch: the kernel records the op's error site and
// the step fails at pock_synchronize with ref's message.
#include <cuda_runtime.h>

#include <memory>
#include <new>
#include <string>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_util.hpp"
#include "kernels/cuda/checked_kernel.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/training_logic.hpp"
#include "kernels/cuda/training_parts.hpp"
#include "kernels/params/training.hpp"

namespace pock::cuda {
namespace {

std::string op_name(const pock_op_desc& op) { return std::string(op.op) + " '" + op.name + "'"; }
bool f32(const pock_tensor_desc& t) { return is_dtype(t, POCK_F32); }

// ---- MseLoss and MseLossGrad ------------------------------------------------------------------

__global__ void mse_partials(const float* p, const float* t, int64_t n, double* partials) {
  double sum = 0.0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    sum += mse_term(p[i], t[i]);
  }
  sum = block_reduce(sum, SumOp{}, 0.0);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// out = sum(values[0, count)) / divisor (0 when divisor is 0); divisor from `counts` when given.
__global__ void mean_finish(const double* values, const double* counts, int64_t count, int64_t divisor, float* out) {
  double sum = 0.0, n = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    sum += values[i];
    if (counts) n += counts[i];
  }
  sum = block_reduce(sum, SumOp{}, 0.0);
  n = block_reduce(n, SumOp{}, 0.0);
  if (threadIdx.x == 0) *out = mean_or_zero(sum, counts ? static_cast<int64_t>(n) : divisor);
}

bool mse_accepts(const pock_op_desc& op) {
  return op.num_inputs == 2 && op.num_outputs == 1 && f32(op.inputs[0]) && f32(op.inputs[1]) && f32(op.outputs[0]) &&
         numel(op.inputs[0]) == numel(op.inputs[1]) && numel(op.outputs[0]) == 1;
}

Status mse_prepare(const pock_op_desc&, void** state) {
  *state = nullptr;
  return reserve_workspace(sizeof(double) * kPartialBlocks);
}

Status mse_loss(const KernelCall& c) {
  const int64_t n = numel(c.in(0));
  const unsigned blocks = std::min<unsigned>(kPartialBlocks, grid_for(n));
  auto* partials = static_cast<double*>(workspace());
  cudaStream_t stream = current_stream();
  mse_partials<<<blocks, kReduceThreads, 0, stream>>>(c.in_data<float>(0), c.in_data<float>(1), n, partials);
  mean_finish<<<1, 1024, 0, stream>>>(partials, nullptr, blocks, n, c.out_data<float>(0));
  return check(cudaGetLastError(), op_name(*c.desc));
}

struct MseGrad {
  const float *dloss, *p, *t;
  float* dp;
  int64_t n;
  __device__ void operator()(int64_t i) const { dp[i] = mse_grad(*dloss, p[i], t[i], n); }
};

bool mse_grad_accepts(const pock_op_desc& op) {
  return op.num_inputs == 3 && op.num_outputs == 1 && f32(op.inputs[0]) && numel(op.inputs[0]) == 1 && f32(op.inputs[1]) &&
         f32(op.inputs[2]) && f32(op.outputs[0]) && numel(op.inputs[1]) == numel(op.inputs[2]) &&
         numel(op.outputs[0]) == numel(op.inputs[1]);
}

Status mse_loss_grad(const KernelCall& c) {
  const int64_t n = numel(c.in(1));
  return check(launch_map(n, current_stream(),
                          MseGrad{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2), c.out_data<float>(0), n}),
               op_name(*c.desc));
}

// ---- SoftmaxCrossEntropy and its gradient -----------------------------------------------------

using CrossEntropyState = Checked<params::CrossEntropyParams>;  // the site: a label outside [0, C)

struct RowShape {
  int64_t rows = 0, classes = 0;
};
RowShape row_shape(const pock_tensor_desc& logits) {
  RowShape s;
  s.classes = last_dim(logits);
  s.rows = s.classes ? numel(logits) / s.classes : 0;
  return s;
}

// The block's row: log-sum-exp (max first, as ref) and, when asked, the mean of the logits.
struct RowStats {
  double lse, mean;
};
__device__ RowStats row_stats(const float* x, int64_t classes, bool want_mean) {
  float m = -INFINITY;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) m = fmaxf(m, x[k]);
  const double max = block_reduce(m, MaxOp{}, -INFINITY);
  double s = 0.0, sx = 0.0;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
    s += exp(static_cast<double>(x[k]) - max);
    if (want_mean) sx += x[k];
  }
  s = block_reduce(s, SumOp{}, 0.0);
  if (want_mean) sx = block_reduce(sx, SumOp{}, 0.0);
  return {max + log(s), sx / static_cast<double>(classes)};
}

// One block per row: rows_loss[r] and rows_counted[r] (0 for an ignored row).
__global__ void cross_entropy_rows(const float* logits, const int64_t* labels, int64_t classes, int64_t ignore,
                                   double smoothing, double* rows_loss, double* rows_counted, ErrorSite error) {
  const int64_t r = blockIdx.x;
  const int64_t label = labels[r];
  const bool ignored = label == ignore;
  const bool valid = ignored || (label >= 0 && label < classes);
  if (!valid || ignored) {  // uniform over the block: every thread returns
    if (threadIdx.x == 0) {
      rows_loss[r] = 0.0;
      rows_counted[r] = 0.0;
      if (!valid) error.report();
    }
    return;
  }
  const float* x = logits + r * classes;
  const RowStats st = row_stats(x, classes, smoothing != 0.0);
  if (threadIdx.x == 0) {
    rows_loss[r] = cross_entropy_row(st.lse, x[label], smoothing != 0.0 ? st.mean : 0.0, smoothing);
    rows_counted[r] = 1.0;
  }
}

// counted[0] = rows not ignored, for the gradient's 1/n.
__global__ void count_rows(const int64_t* labels, int64_t rows, int64_t ignore, double* counted) {
  double n = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) n += labels[r] != ignore ? 1.0 : 0.0;
  n = block_reduce(n, SumOp{}, 0.0);
  if (threadIdx.x == 0) *counted = n;
}

// One block per row. dx may be the logits' own buffer: each element is read by the thread that
// writes it, after the row's statistics are complete.
__global__ void cross_entropy_grad_rows(const float* dloss, const float* logits, const int64_t* labels, float* dx,
                                        int64_t classes, int64_t ignore, double smoothing, const double* counted,
                                        ErrorSite error) {
  const int64_t r = blockIdx.x;
  const int64_t label = labels[r];
  const float* x = logits + r * classes;
  float* d = dx + r * classes;
  if (label == ignore || label < 0 || label >= classes) {
    if (label != ignore && threadIdx.x == 0) error.report();
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) d[k] = 0.0f;
    return;
  }
  const double n = *counted;
  const double scale = n != 0.0 ? *dloss / n : 0.0;
  const double lse = row_stats(x, classes, false).lse;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
    d[k] = cross_entropy_grad(x[k], lse, k == label, smoothing, classes, scale);
  }
}

bool cross_entropy_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1 || !f32(op.inputs[0]) || !is_dtype(op.inputs[1], POCK_I64)) return false;
  const RowShape s = row_shape(op.inputs[0]);
  return op.inputs[0].rank >= 1 && numel(op.inputs[1]) == s.rows && s.rows <= 0x7fffffff && f32(op.outputs[0]);
}

bool cross_entropy_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 3 || op.num_outputs != 1 || !f32(op.inputs[0]) || numel(op.inputs[0]) != 1 || !f32(op.inputs[1]) ||
      !is_dtype(op.inputs[2], POCK_I64) || !f32(op.outputs[0])) {
    return false;
  }
  const RowShape s = row_shape(op.inputs[1]);
  return op.inputs[1].rank >= 1 && numel(op.inputs[2]) == s.rows && s.rows <= 0x7fffffff &&
         numel(op.outputs[0]) == numel(op.inputs[1]);
}

// Ref's message for a bad label, without the label and row the device does not report back.
std::string label_error(const pock_op_desc& op, const params::CrossEntropyParams&) {
  const bool grad = op.num_inputs == 3;
  return "a label is outside [0, " + std::to_string(row_shape(op.inputs[grad ? 1 : 0]).classes) +
         ") and is not ignore_index";
}

Status cross_entropy_prepare(const pock_op_desc& op, void** state) {
  std::unique_ptr<CrossEntropyState> s;
  POCK_RETURN_IF_ERROR(prepare_checked<params::CrossEntropyParams>(op, label_error, &s));
  const bool grad = op.num_inputs == 3;
  const RowShape rows = row_shape(op.inputs[grad ? 1 : 0]);
  POCK_RETURN_IF_ERROR(reserve_workspace(sizeof(double) * (grad ? 1 : 2 * static_cast<size_t>(rows.rows))));
  *state = s.release();
  return Status::ok();
}

void cross_entropy_release(void* state) { delete static_cast<CrossEntropyState*>(state); }

Status softmax_cross_entropy(const KernelCall& c) {
  const auto& s = *static_cast<const CrossEntropyState*>(c.state);
  const RowShape shape = row_shape(c.in(0));
  cudaStream_t stream = current_stream();
  auto* rows_loss = static_cast<double*>(workspace());
  double* rows_counted = rows_loss + shape.rows;
  if (shape.rows > 0) {
    cross_entropy_rows<<<static_cast<unsigned>(shape.rows), kReduceThreads, 0, stream>>>(
        c.in_data<float>(0), c.in_data<int64_t>(1), shape.classes, s.params.ignore_index, s.params.label_smoothing,
        rows_loss, rows_counted, s.error());
  }
  mean_finish<<<1, 1024, 0, stream>>>(rows_loss, rows_counted, shape.rows, 0, c.out_data<float>(0));
  return check(cudaGetLastError(), op_name(*c.desc));
}

Status softmax_cross_entropy_grad(const KernelCall& c) {
  const auto& s = *static_cast<const CrossEntropyState*>(c.state);
  const RowShape shape = row_shape(c.in(1));
  if (shape.rows == 0) return Status::ok();
  cudaStream_t stream = current_stream();
  auto* counted = static_cast<double*>(workspace());
  count_rows<<<1, 1024, 0, stream>>>(c.in_data<int64_t>(2), shape.rows, s.params.ignore_index, counted);
  cross_entropy_grad_rows<<<static_cast<unsigned>(shape.rows), kReduceThreads, 0, stream>>>(
      c.in_data<float>(0), c.in_data<float>(1), c.in_data<int64_t>(2), c.out_data<float>(0), shape.classes,
      s.params.ignore_index, s.params.label_smoothing, counted, s.error());
  return check(cudaGetLastError(), op_name(*c.desc));
}

KernelDef def(const char* op, KernelFn run, KernelPrepareFn prepare, KernelReleaseFn release,
              bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCudaScore, prepare, release};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_training_losses(KernelTable& t) {
  t.add(def("MseLoss", mse_loss, mse_prepare, nullptr, mse_accepts));
  t.add(def("MseLossGrad", mse_loss_grad, nullptr, nullptr, mse_grad_accepts));
  t.add(def("SoftmaxCrossEntropy", softmax_cross_entropy, cross_entropy_prepare, cross_entropy_release, cross_entropy_accepts));
  t.add(def("SoftmaxCrossEntropyGrad", softmax_cross_entropy_grad, cross_entropy_prepare, cross_entropy_release,
            cross_entropy_grad_accepts));
}

}  // namespace pock::cuda
