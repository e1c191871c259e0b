// SoftmaxCrossEntropy and its gradient on the cpu backend, rows (one per label) split over the
// thread pool. Per row: the max, the sum of exp(x - max) and the log-sum-exp in vectorized
// passes; the gradient row is scale * exp(x - lse) minus the smoothed one-hot target, which only
// touches the label's element. Labels are checked first, on the caller's thread, so that a bad
// label is an error and no thread has to report one. The loss keeps one partial sum per row in
// scratch made at prepare and adds them in order: the same result on any number of threads.
#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/training.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 13;

POCK_SIMD_CLONES float row_max(const float* x, int64_t n) {
  float m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = simd::max(m, x[i]);
  return m;
}

POCK_SIMD_CLONES float sum_exp_shifted(const float* x, float shift, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += simd::exp(x[i] - shift);
  return sum;
}

POCK_SIMD_CLONES float row_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

// y = scale * exp(x - shift) - offset
POCK_SIMD_CLONES void scaled_exp(const float* x, float shift, float scale, float offset, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = scale * simd::exp(x[i] - shift) - offset;
}

float log_sum_exp(const float* x, int64_t n) {
  const float m = row_max(x, n);
  return m + std::log(sum_exp_shifted(x, m, n));
}

struct Rows {
  int64_t rows = 0, classes = 0;
};

Rows rows_of(const pock_tensor_desc& logits) {
  Rows r;
  r.classes = logits.dims[logits.rank - 1];
  r.rows = r.classes ? numel(logits) / r.classes : 0;
  return r;
}

bool fits(const pock_tensor_desc& logits, const pock_tensor_desc& labels) {
  return is_f32(logits) && logits.rank >= 2 && labels.dtype == POCK_I64 && numel(labels) == rows_of(logits).rows &&
         rows_of(logits).classes > 0;
}

bool loss_accepts(const pock_op_desc& op) {
  return op.num_inputs == 2 && op.num_outputs == 1 && is_f32(op.outputs[0]) && fits(op.inputs[0], op.inputs[1]);
}

bool grad_accepts(const pock_op_desc& op) {
  return op.num_inputs == 3 && op.num_outputs == 1 && is_f32(op.inputs[0]) && numel(op.inputs[0]) == 1 &&
         fits(op.inputs[1], op.inputs[2]) && numel(op.outputs[0]) == numel(op.inputs[1]);
}

template <typename RowFn>
void for_rows(const KernelCall& c, const Rows& r, const RowFn& fn) {
  const size_t rows = static_cast<size_t>(r.rows);
  const size_t per_task = std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(r.classes));
  pthreadpool_t pool = rows > per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, rows, balanced_tile(pool, rows, per_task), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) fn(static_cast<int64_t>(i));
  });
}

// The forward's per-op state: its parameters and a loss per row (summed in a fixed order, so the
// result does not depend on how the rows were split over threads).
struct LossState {
  params::CrossEntropyParams params;
  std::unique_ptr<double[]> row_loss;
};

Status loss_prepare(const pock_op_desc& op, void** state) {
  auto s = std::unique_ptr<LossState>(new (std::nothrow) LossState{});
  if (s) s->row_loss.reset(new (std::nothrow) double[static_cast<size_t>(rows_of(op.inputs[0]).rows) + 1]);
  if (!s || !s->row_loss) return Status(Code::kOutOfMemory, std::string("SoftmaxCrossEntropy '") + op.name + "': row losses");
  POCK_RETURN_IF_ERROR(params::parse(op, &s->params));
  *state = s.release();
  return Status::ok();
}

void loss_release(void* state) { delete static_cast<LossState*>(state); }

// Per row: (1 - e) (lse - x[label]) + e (lse - mean(x)), e = label_smoothing (PyTorch).
Status loss(const KernelCall& c) {
  const float* logits = c.in_data<float>(0);
  const int64_t* labels = c.in_data<int64_t>(1);
  const Rows r = rows_of(c.in(0));
  const auto& state = *static_cast<const LossState*>(c.state);
  const int64_t ignore = state.params.ignore_index;
  const float eps = static_cast<float>(state.params.label_smoothing);
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, r.rows, r.classes, ignore, &counted));
  double* row_loss = state.row_loss.get();
  for_rows(c, r, [&](int64_t i) {
    if (labels[i] == ignore) {
      row_loss[i] = 0.0;
      return;
    }
    const float* x = logits + i * r.classes;
    const double lse = log_sum_exp(x, r.classes);
    const double mean_x = eps != 0.0f ? row_sum(x, r.classes) / static_cast<double>(r.classes) : 0.0;
    row_loss[i] = lse - (1.0 - eps) * x[labels[i]] - eps * mean_x;
  });
  double total = 0.0;
  for (int64_t i = 0; i < r.rows; ++i) total += row_loss[i];
  *c.out_data<float>(0) = counted ? static_cast<float>(total / static_cast<double>(counted)) : 0.0f;
  return Status::ok();
}

// dlogits = dloss / n (softmax - (1 - e) onehot(label) - e / C); ignored rows get 0.
Status loss_grad(const KernelCall& c, const params::CrossEntropyParams& p) {
  const float dloss = *c.in_data<float>(0);
  const float* logits = c.in_data<float>(1);
  const int64_t* labels = c.in_data<int64_t>(2);
  float* dx = c.out_data<float>(0);
  const Rows r = rows_of(c.in(1));
  const int64_t ignore = p.ignore_index;
  const double eps = p.label_smoothing;
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, r.rows, r.classes, ignore, &counted));
  const float scale = counted ? static_cast<float>(dloss / static_cast<double>(counted)) : 0.0f;
  const float smoothing_share = static_cast<float>(scale * eps / static_cast<double>(r.classes));
  const float label_share = static_cast<float>(scale * (1.0 - eps));
  for_rows(c, r, [&](int64_t i) {
    float* d = dx + i * r.classes;
    if (labels[i] == ignore) {
      std::fill(d, d + r.classes, 0.0f);
      return;
    }
    const float* x = logits + i * r.classes;
    scaled_exp(x, log_sum_exp(x, r.classes), scale, smoothing_share, d, r.classes);
    d[labels[i]] -= label_share;
  });
  return Status::ok();
}

}  // namespace

void register_loss(KernelTable& t) {
  KernelDef forward{"SoftmaxCrossEntropy", DType::kF32, loss, kCpuScore, loss_prepare, loss_release};
  forward.accepts = loss_accepts;
  t.add(forward);
  KernelDef backward = typed_kernel<params::CrossEntropyParams, loss_grad>("SoftmaxCrossEntropyGrad", DType::kF32, kCpuScore);
  backward.accepts = grad_accepts;
  t.add(backward);
}

}  // namespace pock::cpu
