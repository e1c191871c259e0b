// cpu kernels of the indexing family: TopK (f32, i32, i64), the forward of the values' gradient
// path (which then runs as a cpu ScatterElements), and ReverseSequence (any dtype: rows of the
// axes after batch and time move as bytes, split over threads; forward and gradient alike). Lines along the axis split over threads; a line
// strided in x (the axis not innermost) is first copied to a contiguous row, then selected with
// the comparison and the std::partial_sort ref uses, so both return the same entries in the same
// order, ties included. The rows and orders of each tile of lines are made at prepare.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/axis_view.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/indexing.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

template <typename T>
struct TopKPlan {
  params::TopKParams p;
  AxisView v;
  size_t tile = 1;            // lines per tile of the thread pool's loop
  std::vector<T> rows;        // per tile: one line's values, contiguous
  std::vector<int64_t> order; // per tile: one line's positions, selected in place
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const int rank = op.inputs[0].rank;
    v = view_around(op.inputs[0], static_cast<int>(p.axis < 0 ? p.axis + rank : p.axis));
    pool = thread_pool_for(op.num_threads);
    const size_t lines = static_cast<size_t>(v.outer * v.inner);
    tile = balanced_tile(pool, lines, static_cast<size_t>(std::max<int64_t>(1, 1024 / v.len)));
    const size_t tiles = (lines + tile - 1) / tile;
    rows.resize(tiles * static_cast<size_t>(v.len));
    order.resize(rows.size());
    return Status::ok();
  }
};

template <typename T>
Status top_k(const KernelCall& c, TopKPlan<T>& plan) {
  const AxisView& v = plan.v;
  const int64_t k = plan.p.k;
  const bool largest = plan.p.largest;
  const T* x = c.in_data<T>(0);
  T* values = c.out_data<T>(0);
  auto* indices = c.out_data<int64_t>(1);
  const size_t lines = static_cast<size_t>(v.outer * v.inner);
  parallel_for(plan.pool, lines, plan.tile, [&](size_t begin, size_t end) {
    const size_t slot = begin / plan.tile * static_cast<size_t>(v.len);
    T* row = plan.rows.data() + slot;
    int64_t* order = plan.order.data() + slot;
    for (size_t line = begin; line < end; ++line) {
      const int64_t o = static_cast<int64_t>(line) / v.inner, i = static_cast<int64_t>(line) % v.inner;
      const T* src = x + o * v.len * v.inner + i;
      for (int64_t j = 0; j < v.len; ++j) {
        row[j] = src[j * v.inner];
        order[j] = j;
      }
      auto before = [&](int64_t a, int64_t b) {
        if (row[a] != row[b]) return largest ? row[a] > row[b] : row[a] < row[b];
        return a < b;
      };
      std::partial_sort(order, order + k, order + v.len, before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * v.inner + i;
        values[at] = row[order[j]];
        indices[at] = order[j];
      }
    }
  });
  return Status::ok();
}

bool accepts(const pock_op_desc& op) { return op.num_inputs == 1 && op.num_outputs == 2 && op.inputs[0].rank >= 1; }

// Axes 0 and 1 are batch and time (the schema's rule), so each (batch, step) pair owns one
// contiguous row of the remaining axes.
struct ReverseSequencePlan {
  params::ReverseSequenceParams p;
  int64_t batch = 1, steps = 1;
  size_t row_bytes = 0;
  size_t tile = 1;  // rows per tile of the thread pool's loop
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const pock_tensor_desc& x = op.inputs[0];
    batch = x.dims[p.batch_axis];
    steps = x.dims[p.time_axis];
    row_bytes = dtype_size(static_cast<DType>(x.dtype)) * static_cast<size_t>(dims_product(x, 2, x.rank));
    pool = thread_pool_for(op.num_threads);
    const size_t rows = static_cast<size_t>(batch * steps);
    tile = balanced_tile(pool, rows, std::max<size_t>(1, (64 << 10) / std::max<size_t>(row_bytes, 1)));
    return Status::ok();
  }
};

template <typename I>
Status reverse_sequence(const KernelCall& c, ReverseSequencePlan& plan) {
  const I* lens = c.in_data<I>(1);
  for (int64_t b = 0; b < plan.batch; ++b) {
    if (lens[b] < 0 || lens[b] > plan.steps) {
      return c.error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) + " is out of range [0, " +
                     std::to_string(plan.steps) + "]");
    }
  }
  const auto* src = static_cast<const uint8_t*>(c.in(0).data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  const bool time_first = plan.p.time_axis == 0;
  parallel_for(plan.pool, static_cast<size_t>(plan.batch * plan.steps), plan.tile, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      const int64_t outer = static_cast<int64_t>(row) / (time_first ? plan.batch : plan.steps);
      const int64_t inner = static_cast<int64_t>(row) % (time_first ? plan.batch : plan.steps);
      const int64_t b = time_first ? inner : outer, t = time_first ? outer : inner;
      const int64_t len = static_cast<int64_t>(lens[b]);
      const int64_t from = t < len ? len - 1 - t : t;
      const int64_t from_row = time_first ? from * plan.batch + b : b * plan.steps + from;
      std::memcpy(dst + row * plan.row_bytes, src + static_cast<size_t>(from_row) * plan.row_bytes, plan.row_bytes);
    }
  });
  return Status::ok();
}

Status reverse_sequence_any(const KernelCall& c, ReverseSequencePlan& plan) {
  return c.in(1).dtype == POCK_I32 ? reverse_sequence<int32_t>(c, plan) : reverse_sequence<int64_t>(c, plan);
}

bool accepts_reverse_sequence(const pock_op_desc& op) {
  return op.num_inputs == 2 && (op.inputs[1].dtype == POCK_I32 || op.inputs[1].dtype == POCK_I64);
}

}  // namespace

void register_indexing(KernelTable& t) {
  t.add(prepared_kernel<TopKPlan<float>, top_k<float>>("TopK", DType::kF32, kCpuScore, accepts));
  t.add(prepared_kernel<TopKPlan<int32_t>, top_k<int32_t>>("TopK", DType::kI32, kCpuScore, accepts));
  t.add(prepared_kernel<TopKPlan<int64_t>, top_k<int64_t>>("TopK", DType::kI64, kCpuScore, accepts));
  for (int i = 0; i < kNumDTypes; ++i) {
    t.add(prepared_kernel<ReverseSequencePlan, reverse_sequence_any>("ReverseSequence", static_cast<DType>(i), kCpuScore,
                                                                     accepts_reverse_sequence));
  }
}

}  // namespace pock::cpu
