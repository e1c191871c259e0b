// Reference kernels of the indexing family. Shapes were checked by the schema; what only the data
// can break (a sequence length out of range) is checked here before anything is written.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/indexing.hpp"
#include "kernels/ref/ref_util.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

// x viewed as [outer, dim, inner] around one axis.
struct AxisView {
  int64_t outer = 1, dim = 1, inner = 1;
  AxisView(const pock_tensor_desc& t, int axis) {
    for (int d = 0; d < t.rank; ++d) {
      if (d < axis) outer *= t.dims[d];
      if (d > axis) inner *= t.dims[d];
    }
    dim = t.dims[axis];
  }
};

int normalized(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

int64_t index_at(const pock_tensor_desc& t, int64_t i) {
  switch (static_cast<DType>(t.dtype)) {
    case DType::kI32: return static_cast<const int32_t*>(t.data)[i];
    case DType::kI64: return static_cast<const int64_t*>(t.data)[i];
    default: return static_cast<int64_t>(static_cast<const float*>(t.data)[i]);  // ONNX casts to int
  }
}

// The parameters and one row's order, sized at prepare: a step allocates nothing.
struct TopKState {
  params::TopKParams p;
  std::vector<int64_t> order;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    order.resize(static_cast<size_t>(op.inputs[0].dims[normalized(p.axis, op.inputs[0].rank)]));
    return Status::ok();
  }
};

// Stable on ties by construction: the comparison itself puts the lower index first.
template <typename T>
Status top_k(const KernelCall& c, TopKState& state) {
  const params::TopKParams& p = state.p;
  std::vector<int64_t>& order = state.order;
  const int axis = normalized(p.axis, c.in(0).rank);
  const AxisView v(c.in(0), axis);
  const T* x = c.in_data<T>(0);
  T* values = c.out_data<T>(0);
  auto* indices = c.out_data<int64_t>(1);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const T* row = x + o * v.dim * v.inner + i;
      auto before = [&](int64_t a, int64_t b) {
        const T va = row[a * v.inner], vb = row[b * v.inner];
        if (va != vb) return p.largest ? va > vb : va < vb;
        return a < b;
      };
      for (int64_t j = 0; j < v.dim; ++j) order[static_cast<size_t>(j)] = j;
      std::partial_sort(order.begin(), order.begin() + p.k, order.end(), before);
      for (int64_t j = 0; j < p.k; ++j) {
        const int64_t at = (o * p.k + j) * v.inner + i;
        values[at] = row[order[static_cast<size_t>(j)] * v.inner];
        indices[at] = order[static_cast<size_t>(j)];
      }
    }
  }
  return Status::ok();
}

Status one_hot(const KernelCall& c, const params::OneHotParams& p) {
  const pock_tensor_desc& out = c.out(0);
  const int axis = normalized(p.axis, out.rank);
  const AxisView v(out, axis);
  const size_t size = dtype_size(static_cast<DType>(out.dtype));
  const auto* off = static_cast<const uint8_t*>(c.in(1).data);
  const uint8_t* on = off + size;
  auto* y = static_cast<uint8_t*>(out.data);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t hot = index_at(c.in(0), o * v.inner + i);
      if (hot < 0) hot += p.depth;  // still out of range: a row of off_value
      for (int64_t d = 0; d < v.dim; ++d) std::memcpy(y + ((o * v.dim + d) * v.inner + i) * size, d == hot ? on : off, size);
    }
  }
  return Status::ok();
}

Status reverse_sequence(const KernelCall& c, const params::ReverseSequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t batch = x.dims[p.batch_axis], steps = x.dims[p.time_axis];
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = index_at(c.in(1), b);
    if (len < 0 || len > steps) {
      return c.error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is out of range [0, " +
                     std::to_string(steps) + "]");
    }
  }
  const size_t row = dtype_size(static_cast<DType>(x.dtype)) * static_cast<size_t>(numel(x) / (batch * steps));
  const auto* src = static_cast<const uint8_t*>(x.data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  // Axes 0 and 1 are batch and time: each (b, t) pair owns one contiguous row of the other axes.
  auto row_at = [&](int64_t b, int64_t t) { return static_cast<size_t>(p.time_axis == 0 ? t * batch + b : b * steps + t) * row; };
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = index_at(c.in(1), b);
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      std::memcpy(dst + row_at(b, t), src + row_at(b, from), row);
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_indexing(KernelTable& t) {
  t.add(prepared_kernel<TopKState, top_k<float>>("TopK", DType::kF32));
  t.add(prepared_kernel<TopKState, top_k<int32_t>>("TopK", DType::kI32));
  t.add(prepared_kernel<TopKState, top_k<int64_t>>("TopK", DType::kI64));
  for (DType indices : {DType::kI32, DType::kI64, DType::kF32}) {
    t.add(typed_kernel<params::OneHotParams, one_hot>("OneHot", indices));
  }
  for (int i = 0; i < kNumDTypes; ++i) {
    t.add(typed_kernel<params::ReverseSequenceParams, reverse_sequence>("ReverseSequence", static_cast<DType>(i)));
  }
}

}  // namespace pock
