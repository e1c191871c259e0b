// The training family's updates on cuda: AccumulateGrad, GlobalNormClipScale, SgdUpdate and
// AdamUpdate (torch.optim semantics, as kernels/ref/training.cpp). The step counter, the clip
// factor and the loss scale live in device memory, so each kernel reads them itself and derives
// the update index and learning rate there (training_logic.hpp): a step never waits on the host.
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/cuda_util.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/training_params.hpp"
#include "kernels/cuda/training_parts.hpp"
#include "kernels/params/training.hpp"

namespace pock::cuda {
namespace {

std::string op_name(const KernelCall& c) { return std::string(c.desc->op) + " '" + c.desc->name + "'"; }

bool f32(const pock_tensor_desc& t) { return is_dtype(t, POCK_F32); }
bool present(const pock_op_desc& op, int i) { return i < op.num_inputs && op.inputs[i].rank >= 0; }

// ---- AccumulateGrad ---------------------------------------------------------------------------

struct AddInto {
  float* acc;
  const float* g;
  __device__ void operator()(int64_t i) const { acc[i] += g[i]; }
};

bool accumulate_accepts(const pock_op_desc& op) {
  return op.num_inputs == 2 && f32(op.inputs[0]) && f32(op.inputs[1]) && numel(op.inputs[0]) == numel(op.inputs[1]);
}

Status accumulate_grad(const KernelCall& c) {
  return check(launch_map(numel(c.in(0)), current_stream(), AddInto{c.inout_data<float>(0), c.in_data<float>(1)}),
               op_name(c));
}

// ---- GlobalNormClipScale ----------------------------------------------------------------------

struct Segment {
  const float* data;
  int64_t n;
};

struct ClipState {
  params::ClipScaleParams params;
  Segment* segments = nullptr;  // device copy of the gradients' addresses, fixed at prepare
  int32_t count = 0;
  ~ClipState() {
    if (segments) cudaFree(segments);
  }
};

// Block (x, y): a strided share of gradient y; partials[y * gridDim.x + x] = its sum of squares.
__global__ void clip_partials(const Segment* segments, double grad_scale, double* partials) {
  const Segment s = segments[blockIdx.y];
  double sum = 0.0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < s.n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const double v = s.data[i] * grad_scale;
    sum += v * v;
  }
  sum = block_reduce(sum, SumOp{}, 0.0);
  if (threadIdx.x == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] = sum;
}

__global__ void clip_finish(const double* partials, int64_t count, double max_norm, float* out) {
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_reduce(sum, SumOp{}, 0.0);
  if (threadIdx.x == 0) *out = clip_coefficient(sum, max_norm);
}

bool clip_accepts(const pock_op_desc& op) {
  if (op.num_inputs < 1 || op.num_outputs != 1 || !f32(op.outputs[0]) || numel(op.outputs[0]) != 1) return false;
  for (int32_t i = 0; i < op.num_inputs; ++i) {
    if (!f32(op.inputs[i])) return false;
  }
  return op.num_inputs <= 65535;  // grid.y
}

Status clip_prepare(const pock_op_desc& op, void** state) {
  std::unique_ptr<ClipState> s(new (std::nothrow) ClipState);
  if (!s) return Status(Code::kOutOfMemory, "GlobalNormClipScale: state");
  POCK_RETURN_IF_ERROR(parse(op, &s->params));
  std::vector<Segment> host;
  for (int32_t i = 0; i < op.num_inputs; ++i) host.push_back({static_cast<const float*>(op.inputs[i].data), numel(op.inputs[i])});
  s->count = op.num_inputs;
  const std::string what = std::string("GlobalNormClipScale '") + op.name + "'";
  POCK_RETURN_IF_ERROR(check(cudaMalloc(reinterpret_cast<void**>(&s->segments), host.size() * sizeof(Segment)), what));
  POCK_RETURN_IF_ERROR(
      check(cudaMemcpy(s->segments, host.data(), host.size() * sizeof(Segment), cudaMemcpyHostToDevice), what));
  POCK_RETURN_IF_ERROR(reserve_workspace(sizeof(double) * kPartialBlocks * static_cast<size_t>(op.num_inputs)));
  *state = s.release();
  return Status::ok();
}

void clip_release(void* state) { delete static_cast<ClipState*>(state); }

Status global_norm_clip_scale(const KernelCall& c) {
  const auto& s = *static_cast<const ClipState*>(c.state);
  int64_t largest = 1;
  for (int i = 0; i < c.num_inputs(); ++i) largest = std::max(largest, numel(c.in(i)));
  const unsigned blocks = std::min<unsigned>(kPartialBlocks, grid_for(largest));
  auto* partials = static_cast<double*>(workspace());
  cudaStream_t stream = current_stream();
  clip_partials<<<dim3(blocks, static_cast<unsigned>(s.count)), kReduceThreads, 0, stream>>>(s.segments, s.params.grad_scale,
                                                                                             partials);
  clip_finish<<<1, 1024, 0, stream>>>(partials, static_cast<int64_t>(blocks) * s.count, s.params.max_norm,
                                      c.out_data<float>(0));
  return check(cudaGetLastError(), op_name(c));
}

// ---- SgdUpdate and AdamUpdate -----------------------------------------------------------------

// SgdUpdate(param, grad, step, momentum?, clip?); AdamUpdate(param, grad, step, m, v, clip?).
bool update_accepts(const pock_op_desc& op, int state_inputs) {
  const int clip = 3 + state_inputs;
  if (op.num_inputs < 3 || op.num_inputs > clip + 1 || op.num_outputs != 0) return false;
  const int64_t n = numel(op.inputs[1]);
  if (!f32(op.inputs[0]) || !f32(op.inputs[1]) || n > numel(op.inputs[0])) return false;
  if (!is_dtype(op.inputs[2], POCK_I64) || numel(op.inputs[2]) != 1) return false;
  for (int i = 3; i < clip && i < op.num_inputs; ++i) {
    if (present(op, i) && (!f32(op.inputs[i]) || numel(op.inputs[i]) < n)) return false;
  }
  return !present(op, clip) || (f32(op.inputs[clip]) && numel(op.inputs[clip]) == 1);
}
bool sgd_accepts(const pock_op_desc& op) { return update_accepts(op, 1); }
bool adam_accepts(const pock_op_desc& op) {
  return update_accepts(op, 2) && op.num_inputs >= 5 && present(op, 3) && present(op, 4);
}

// Each thread derives the update's scalars from the device-side step and clip factor, then
// applies the update to its share of the elements.
template <typename Launch>
__global__ void update_kernel(Launch a) {
  const int64_t u = a.schedule.update_index(*a.step);
  if (u == 0) return;
  const auto e = a.element_for(u);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    a.apply(e, i);
  }
}

struct SgdLaunch {
  ScheduleLogic schedule;
  SgdElement element;  // lr and scale filled per step
  const int64_t* step;
  const float* clip;
  float *p, *grad, *buf;
  int64_t n;
  __device__ SgdElement element_for(int64_t u) const {
    SgdElement e = element;
    e.lr = static_cast<float>(schedule.lr_at(u));
    e.scale = schedule.gradient_scale(clip ? *clip : 1.0f);
    return e;
  }
  __device__ void apply(const SgdElement& e, int64_t i) const { e(p, grad, buf, i); }
};

struct AdamLaunch {
  ScheduleLogic schedule;
  AdamElement element;
  const int64_t* step;
  const float* clip;
  float *p, *grad, *m, *v;
  int64_t n;
  __device__ AdamElement element_for(int64_t u) const {
    AdamElement e = element;
    e.lr = schedule.lr_at(u);
    e.set_update(u);
    e.scale = schedule.gradient_scale(clip ? *clip : 1.0f);
    return e;
  }
  __device__ void apply(const AdamElement& e, int64_t i) const { e(p, grad, m, v, i); }
};

Status sgd_update(const KernelCall& c, const params::SgdUpdateParams& h) {
  SgdLaunch a{};
  a.schedule = schedule_logic(h);
  a.element = sgd_element(h);
  a.step = c.in_data<int64_t>(2);
  a.clip = c.num_inputs() > 4 && c.has_input(4) ? c.in_data<float>(4) : nullptr;
  a.p = c.inout_data<float>(0);
  a.grad = c.inout_data<float>(1);
  a.buf = c.num_inputs() > 3 && c.has_input(3) ? c.inout_data<float>(3) : nullptr;
  a.n = numel(c.in(1));  // a partial-channel gradient covers only the parameter's leading rows
  if (a.n == 0) return Status::ok();
  update_kernel<<<grid_for(a.n), kBlockThreads, 0, current_stream()>>>(a);
  return check(cudaGetLastError(), op_name(c));
}

Status adam_update(const KernelCall& c, const params::AdamUpdateParams& h) {
  AdamLaunch a{};
  a.schedule = schedule_logic(h);
  a.element = adam_element(h);
  a.step = c.in_data<int64_t>(2);
  a.clip = c.num_inputs() > 5 && c.has_input(5) ? c.in_data<float>(5) : nullptr;
  a.p = c.inout_data<float>(0);
  a.grad = c.inout_data<float>(1);
  a.m = c.inout_data<float>(3);
  a.v = c.inout_data<float>(4);
  a.n = numel(c.in(1));
  if (a.n == 0) return Status::ok();
  update_kernel<<<grid_for(a.n), kBlockThreads, 0, current_stream()>>>(a);
  return check(cudaGetLastError(), op_name(c));
}

KernelDef with_accepts(KernelDef d, bool (*accepts)(const pock_op_desc&)) {
  d.score = kCudaScore;
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_training(KernelTable& t) {
  t.add(with_accepts({"AccumulateGrad", DType::kF32, accumulate_grad}, accumulate_accepts));
  t.add(with_accepts({"GlobalNormClipScale", DType::kF32, global_norm_clip_scale, kCudaScore, clip_prepare, clip_release},
                     clip_accepts));
  t.add(with_accepts(typed_kernel<params::SgdUpdateParams, sgd_update>("SgdUpdate", DType::kF32), sgd_accepts));
  t.add(with_accepts(typed_kernel<params::AdamUpdateParams, adam_update>("AdamUpdate", DType::kF32), adam_accepts));
  register_training_losses(t);
}

}  // namespace pock::cuda
