// cpu kernels of GatherND, ScatterND (f32, i32, i64 data; i32 or i64 indices) and ScatterNDGrad
// (f32). One pass over the index tuples checks them (before anything is written, as ref) and turns each into the data
// offset of the slice it addresses, in a table made at prepare; then whole slices move. GatherND's
// slices split over threads; ScatterND's tuples may repeat, so it applies them in ref's order and
// splits each slice's span over threads instead (a thread owns the same columns of every slice).
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/gather_scatter/scatter_combine.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/gather_scatter.hpp"
#include "kernels/scatter_nd_grad.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

struct SlicePlan {
  params::GatherScatterParams p;
  int first = 0;                // input of data (ScatterNDGrad's dy comes before it); indices follow it
  int batch = 0;                // leading axes data and indices share (batch_dims)
  int64_t k = 1;                // axes each tuple indexes
  int64_t slice = 1;            // elements per addressed slice
  int64_t per_batch = 1;        // tuples per batch entry
  int64_t batch_elements = 1;   // data elements per batch entry
  std::vector<int64_t> offsets; // per tuple: the data offset of its slice (filled each run)
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    first = std::string_view(op.op) == "ScatterNDGrad" ? 1 : 0;
    const pock_tensor_desc& data = op.inputs[first];
    const pock_tensor_desc& indices = op.inputs[first + 1];
    batch = static_cast<int>(p.batch_dims);
    k = indices.dims[indices.rank - 1];
    slice = dims_product(data, batch + static_cast<int>(k), data.rank);
    batch_elements = dims_product(data, batch, data.rank);
    const int64_t tuples = numel(indices) / k;
    per_batch = tuples / dims_product(data, 0, batch);
    offsets.resize(static_cast<size_t>(tuples));
    pool = thread_pool_for(op.num_threads);
    return Status::ok();
  }
};

// Checks every tuple and stores the offset of its slice.
template <typename I>
Status locate_slices(const KernelCall& c, SlicePlan& plan) {
  const I* idx = c.in_data<I>(plan.first + 1);
  const int64_t* dims = c.in(plan.first).dims + plan.batch;
  for (size_t t = 0; t < plan.offsets.size(); ++t) {
    const I* tuple = idx + static_cast<int64_t>(t) * plan.k;
    int64_t within = 0;
    for (int64_t j = 0; j < plan.k; ++j) {
      int64_t v = tuple[j];
      if (v < -dims[j] || v >= dims[j]) {
        return c.error("index " + std::to_string(v) + " of tuple " + std::to_string(t) + " is out of range [" +
                       std::to_string(-dims[j]) + ", " + std::to_string(dims[j]) + ") for data axis " +
                       std::to_string(plan.batch + j));
      }
      v += v < 0 ? dims[j] : 0;
      within = within * dims[j] + v;
    }
    plan.offsets[t] = (static_cast<int64_t>(t) / plan.per_batch) * plan.batch_elements + within * plan.slice;
  }
  return Status::ok();
}

template <typename T, typename I>
Status gather_nd(const KernelCall& c, SlicePlan& plan) {
  POCK_RETURN_IF_ERROR(locate_slices<I>(c, plan));
  const T* data = c.in_data<T>(0);
  T* out = c.out_data<T>(0);
  const size_t tuples = plan.offsets.size();
  const size_t min_tile = static_cast<size_t>(std::max<int64_t>(1, 4096 / plan.slice));
  parallel_for(plan.pool, tuples, balanced_tile(plan.pool, tuples, min_tile), [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      std::memcpy(out + static_cast<int64_t>(t) * plan.slice, data + plan.offsets[t], static_cast<size_t>(plan.slice) * sizeof(T));
    }
  });
  return Status::ok();
}

template <typename T, params::ScatterReduction R>
void scatter_slices(const KernelCall& c, const SlicePlan& plan) {
  const T* updates = c.in_data<T>(2);
  T* out = c.out_data<T>(0);
  const size_t span = static_cast<size_t>(plan.slice);
  parallel_for(plan.pool, span, balanced_tile(plan.pool, span, 1024), [&](size_t begin, size_t end) {
    for (size_t t = 0; t < plan.offsets.size(); ++t) {
      T* slot = out + plan.offsets[t];
      const T* u = updates + static_cast<int64_t>(t) * plan.slice;
      for (size_t e = begin; e < end; ++e) slot[e] = scatter_combine<R>(slot[e], u[e]);
    }
  });
}

template <typename T, typename I>
Status scatter_nd(const KernelCall& c, SlicePlan& plan) {
  POCK_RETURN_IF_ERROR(locate_slices<I>(c, plan));
  if (c.out(0).data != c.in(0).data) std::memcpy(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  with_reduction(plan.p.reduction, [&](auto r) { scatter_slices<T, decltype(r)::value>(c, plan); });
  return Status::ok();
}

// ScatterNDGrad (dy, data, indices, updates): kernels/scatter_nd_grad.hpp's walk, the slices'
// columns split over threads as ScatterND splits them.
struct ScatterNDGradPlan : SlicePlan {
  std::vector<int64_t> winner;
  std::vector<double> running;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(SlicePlan::prepare(op));
    winner.resize(static_cast<size_t>(numel(op.inputs[1])));
    running.resize(winner.size());
    return Status::ok();
  }
};

template <typename I>
Status scatter_nd_grad(const KernelCall& c, ScatterNDGradPlan& plan) {
  POCK_RETURN_IF_ERROR(locate_slices<I>(c, plan));
  const nd_grad::Walk w{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(3), plan.offsets.data(),
                           static_cast<int64_t>(plan.offsets.size()), plan.slice, c.out_data<float>(0), c.out_data<float>(1),
                           plan.running.data(), plan.winner.data()};
  nd_grad::start(w, numel(c.in(1)));
  const size_t span = static_cast<size_t>(plan.slice);
  parallel_for(plan.pool, span, balanced_tile(plan.pool, span, 1024), [&](size_t begin, size_t end) {
    nd_grad::columns(w, plan.p.reduction, static_cast<int64_t>(begin), static_cast<int64_t>(end));
  });
  return Status::ok();
}

Status scatter_nd_grad_any(const KernelCall& c, ScatterNDGradPlan& plan) {
  return c.in(2).dtype == POCK_I32 ? scatter_nd_grad<int32_t>(c, plan) : scatter_nd_grad<int64_t>(c, plan);
}

using SliceFn = Status (*)(const KernelCall&, SlicePlan&);

template <SliceFn I32, SliceFn I64>
Status by_index_type(const KernelCall& c, SlicePlan& plan) {
  return c.in(1).dtype == POCK_I32 ? I32(c, plan) : I64(c, plan);
}

bool accepts(const pock_op_desc& op) {
  const pock_tensor_desc& indices = op.inputs[std::string_view(op.op) == "ScatterNDGrad" ? 2 : 1];
  return (indices.dtype == POCK_I32 || indices.dtype == POCK_I64) && indices.rank >= 1 && indices.dims[indices.rank - 1] >= 1;
}

template <typename T>
void add_kernels(KernelTable& t, DType dtype) {
  t.add(prepared_kernel<SlicePlan, by_index_type<gather_nd<T, int32_t>, gather_nd<T, int64_t>>>("GatherND", dtype, kCpuScore, accepts));
  t.add(prepared_kernel<SlicePlan, by_index_type<scatter_nd<T, int32_t>, scatter_nd<T, int64_t>>>("ScatterND", dtype, kCpuScore, accepts));
}

}  // namespace

void register_gather_scatter_nd(KernelTable& t) {
  add_kernels<float>(t, DType::kF32);
  t.add(prepared_kernel<ScatterNDGradPlan, scatter_nd_grad_any>("ScatterNDGrad", DType::kF32, kCpuScore, accepts));
  add_kernels<int32_t>(t, DType::kI32);
  add_kernels<int64_t>(t, DType::kI64);
}

}  // namespace pock::cpu
