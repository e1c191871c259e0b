// cpu kernels of GatherElements and ScatterElements (f32, i32, i64 data; i32 or i64 indices): the
// ops autodiff emits for GatherElements', ScatterElements' and TopK's gradients.
// indices are walked as [outer, len, inner] around the axis. Where indices' other axes are shorter
// than data's, an entry's place in data is not its own offset, so prepare tabulates the data offset
// of every outer and every inner coordinate: a step adds two table entries and index * stride.
// Every index is checked before anything is written, as in ref. A scatter's entries that share a
// line along the axis hit the same slots, so lines are what threads split: each line's entries
// are applied in ref's order, giving the same result, repeated indices included.
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/gather_scatter/scatter_combine.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/gather_scatter.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

using params::ScatterReduction;

// The data offset of each coordinate of indices' axes [begin, end), flattened row-major.
std::vector<int64_t> data_offsets(const pock_tensor_desc& data, const pock_tensor_desc& indices, int begin, int end) {
  int64_t count = 1;
  for (int d = begin; d < end; ++d) count *= indices.dims[d];
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  std::vector<int64_t> data_stride(static_cast<size_t>(data.rank), 1);
  for (int d = data.rank - 2; d >= 0; --d) data_stride[static_cast<size_t>(d)] = data_stride[static_cast<size_t>(d + 1)] * data.dims[d + 1];
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e, offset = 0;
    for (int d = end - 1; d >= begin; --d) {
      offset += (rest % indices.dims[d]) * data_stride[static_cast<size_t>(d)];
      rest /= indices.dims[d];
    }
    offsets[static_cast<size_t>(e)] = offset;
  }
  return offsets;
}

struct ElementsPlan {
  params::GatherScatterParams p;
  int axis = 0;
  int64_t outer = 1, len = 1, inner = 1;  // indices around the axis
  int64_t dim = 1, stride = 1;            // data's length and element stride along the axis
  std::vector<int64_t> outer_base, inner_base;
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const pock_tensor_desc& data = op.inputs[0];
    const pock_tensor_desc& indices = op.inputs[1];
    axis = static_cast<int>(p.axis < 0 ? p.axis + data.rank : p.axis);
    outer = dims_product(indices, 0, axis);
    len = indices.dims[axis];
    inner = dims_product(indices, axis + 1, indices.rank);
    dim = data.dims[axis];
    stride = dims_product(data, axis + 1, data.rank);
    outer_base = data_offsets(data, indices, 0, axis);
    inner_base = data_offsets(data, indices, axis + 1, indices.rank);
    pool = thread_pool_for(op.num_threads);
    return Status::ok();
  }
};

// Every index in [-dim, dim); the first one outside named as ref names it.
template <typename I>
Status check_indices(const KernelCall& c, const ElementsPlan& plan) {
  const I* idx = c.in_data<I>(1);
  const int64_t n = numel(c.in(1));
  int64_t low = 0, high = 0;
  for (int64_t e = 0; e < n; ++e) {
    low = std::min<int64_t>(low, idx[e]);
    high = std::max<int64_t>(high, idx[e]);
  }
  if (low >= -plan.dim && high < plan.dim) return Status::ok();
  for (int64_t e = 0; e < n; ++e) {
    if (idx[e] < -plan.dim || idx[e] >= plan.dim) {
      return c.error("index " + std::to_string(static_cast<int64_t>(idx[e])) + " at position " + std::to_string(e) +
                     " is out of range [" + std::to_string(-plan.dim) + ", " + std::to_string(plan.dim) + ") for axis " +
                     std::to_string(plan.axis));
    }
  }
  return Status::ok();
}

template <typename T, typename I>
Status gather_elements(const KernelCall& c, const ElementsPlan& plan) {
  POCK_RETURN_IF_ERROR(check_indices<I>(c, plan));
  const T* data = c.in_data<T>(0);
  const I* idx = c.in_data<I>(1);
  T* out = c.out_data<T>(0);
  const size_t rows = static_cast<size_t>(plan.outer * plan.len);
  const size_t min_tile = static_cast<size_t>(std::max<int64_t>(1, 4096 / plan.inner));
  parallel_for(plan.pool, rows, balanced_tile(plan.pool, rows, min_tile), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      const int64_t o = static_cast<int64_t>(row) / plan.len;
      const T* line = data + plan.outer_base[static_cast<size_t>(o)];
      const int64_t* inner_base = plan.inner_base.data();
      const int64_t first = static_cast<int64_t>(row) * plan.inner;
      for (int64_t i = 0; i < plan.inner; ++i) {
        int64_t k = idx[first + i];
        k += k < 0 ? plan.dim : 0;
        out[first + i] = line[inner_base[i] + k * plan.stride];
      }
    }
  });
  return Status::ok();
}

// Lines (o, i) of the axis split over threads in chunks of inner coordinates; within a chunk the
// entries go in ref's order (k outer, i inner).
template <typename T, typename I, ScatterReduction R>
void scatter_lines(const KernelCall& c, const ElementsPlan& plan) {
  const I* idx = c.in_data<I>(1);
  const T* updates = c.in_data<T>(2);
  T* out = c.out_data<T>(0);
  const int64_t chunk = std::min<int64_t>(plan.inner, 256);
  const int64_t chunks = (plan.inner + chunk - 1) / chunk;
  const size_t items = static_cast<size_t>(plan.outer * chunks);
  parallel_for(plan.pool, items, balanced_tile(plan.pool, items, 1), [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      const int64_t o = static_cast<int64_t>(item) / chunks, i0 = (static_cast<int64_t>(item) % chunks) * chunk;
      const int64_t i1 = std::min(plan.inner, i0 + chunk);
      T* line = out + plan.outer_base[static_cast<size_t>(o)];
      for (int64_t k = 0; k < plan.len; ++k) {
        const int64_t first = (o * plan.len + k) * plan.inner;
        for (int64_t i = i0; i < i1; ++i) {
          int64_t at = idx[first + i];
          at += at < 0 ? plan.dim : 0;
          T& slot = line[plan.inner_base[static_cast<size_t>(i)] + at * plan.stride];
          slot = scatter_combine<R>(slot, updates[first + i]);
        }
      }
    }
  });
}

template <typename T, typename I>
Status scatter_elements(const KernelCall& c, const ElementsPlan& plan) {
  POCK_RETURN_IF_ERROR(check_indices<I>(c, plan));
  if (c.out(0).data != c.in(0).data) std::memcpy(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  with_reduction(plan.p.reduction, [&](auto r) { scatter_lines<T, I, decltype(r)::value>(c, plan); });
  return Status::ok();
}

using ElementsFn = Status (*)(const KernelCall&, const ElementsPlan&);

template <ElementsFn I32, ElementsFn I64>
Status by_index_type(const KernelCall& c, ElementsPlan& plan) {
  return c.in(1).dtype == POCK_I32 ? I32(c, plan) : I64(c, plan);
}

bool accepts(const pock_op_desc& op) {
  const int32_t index = op.inputs[1].dtype;
  return (index == POCK_I32 || index == POCK_I64) && op.inputs[0].rank == op.inputs[1].rank && op.inputs[0].rank >= 1;
}

template <typename T>
void add_kernels(KernelTable& t, DType dtype) {
  t.add(prepared_kernel<ElementsPlan, by_index_type<gather_elements<T, int32_t>, gather_elements<T, int64_t>>>(
      "GatherElements", dtype, kCpuScore, accepts));
  t.add(prepared_kernel<ElementsPlan, by_index_type<scatter_elements<T, int32_t>, scatter_elements<T, int64_t>>>(
      "ScatterElements", dtype, kCpuScore, accepts));
}

}  // namespace

void register_gather_scatter_elements(KernelTable& t) {
  add_kernels<float>(t, DType::kF32);
  add_kernels<int32_t>(t, DType::kI32);
  add_kernels<int64_t>(t, DType::kI64);
}

}  // namespace pock::cpu
