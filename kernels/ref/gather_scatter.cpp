// Reference kernels of the gather_scatter family (ScatterNDGrad's walk is kernels/scatter_nd_grad.hpp,
// which every backend shares). Shapes and attributes were checked by the schema;
// what only the data can break (an index out of range) is checked here, for every index before
// anything is written.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/gather_scatter.hpp"
#include "kernels/ref/ref_util.hpp"
#include "kernels/scatter_nd_grad.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

using params::ScatterReduction;

// Walks the entries of `indices` (same rank as data) and maps each to the flat offset in data of
// the element it names: its own coordinates, with the axis coordinate replaced by the index.
class ElementIndexer {
 public:
  ElementIndexer(const pock_tensor_desc& data, const pock_tensor_desc& indices, int64_t attr_axis)
      : data_(data), indices_(indices), axis_(static_cast<int>(attr_axis < 0 ? attr_axis + data.rank : attr_axis)) {}

  int64_t count() const { return numel(indices_); }

  int64_t raw_index(int64_t e) const {
    return indices_.dtype == POCK_I32 ? static_cast<const int32_t*>(indices_.data)[e]
                                      : static_cast<const int64_t*>(indices_.data)[e];
  }

  Status check(const KernelCall& c) const {
    const int64_t dim = data_.dims[axis_];
    for (int64_t e = 0, n = count(); e < n; ++e) {
      const int64_t k = raw_index(e);
      if (k < -dim || k >= dim) {
        return c.error("index " + std::to_string(k) + " at position " + std::to_string(e) + " is out of range [" +
                       std::to_string(-dim) + ", " + std::to_string(dim) + ") for axis " + std::to_string(axis_));
      }
    }
    return Status::ok();
  }

  // Flat offset in data of entry e (row-major coordinates of e in indices' shape).
  int64_t data_offset(int64_t e) const {
    int64_t offset = 0, stride = 1, rest = e;
    for (int d = data_.rank - 1; d >= 0; --d) {
      int64_t coord = rest % indices_.dims[d];
      rest /= indices_.dims[d];
      if (d == axis_) {
        coord = raw_index(e);
        if (coord < 0) coord += data_.dims[d];
      }
      offset += coord * stride;
      stride *= data_.dims[d];
    }
    return offset;
  }

 private:
  const pock_tensor_desc& data_;
  const pock_tensor_desc& indices_;
  int axis_;
};

Status gather_elements(const KernelCall& c, const params::GatherScatterParams& p) {
  const ElementIndexer at(c.in(0), c.in(1), p.axis);
  POCK_RETURN_IF_ERROR(at.check(c));
  const size_t size = dtype_size(static_cast<DType>(c.in(0).dtype));
  const auto* src = static_cast<const uint8_t*>(c.in(0).data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  for (int64_t e = 0, n = at.count(); e < n; ++e) std::memcpy(dst + e * size, src + at.data_offset(e) * size, size);
  return Status::ok();
}

template <typename T>
T combine(ScatterReduction r, T old, T update) {
  switch (r) {
    case ScatterReduction::kAdd: return static_cast<T>(old + update);
    case ScatterReduction::kMul: return static_cast<T>(old * update);
    case ScatterReduction::kMax: return std::max(old, update);
    case ScatterReduction::kMin: return std::min(old, update);
    case ScatterReduction::kNone: break;
  }
  return update;
}

// Entries are applied in order, so with `none` the last of repeated indices wins (as ONNX's
// reference does) and the reductions fold repeated indices one after the other.
template <typename T>
Status scatter_elements(const KernelCall& c, const params::GatherScatterParams& p) {
  const ElementIndexer at(c.in(0), c.in(1), p.axis);
  POCK_RETURN_IF_ERROR(at.check(c));
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  const T* updates = c.in_data<T>(2);
  T* out = c.out_data<T>(0);
  for (int64_t e = 0, n = at.count(); e < n; ++e) {
    T& slot = out[at.data_offset(e)];
    slot = combine(p.reduction, slot, updates[e]);
  }
  return Status::ok();
}

Status scatter_bytes(const KernelCall& c, const params::GatherScatterParams& p) {
  const ElementIndexer at(c.in(0), c.in(1), p.axis);
  POCK_RETURN_IF_ERROR(at.check(c));
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  const size_t size = dtype_size(static_cast<DType>(c.in(0).dtype));
  const auto* src = static_cast<const uint8_t*>(c.in(2).data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  for (int64_t e = 0, n = at.count(); e < n; ++e) std::memcpy(dst + at.data_offset(e) * size, src + e * size, size);
  return Status::ok();
}

// indices [..., k] addressing slices of data after `batch` shared leading axes: the flat element
// offset in data of each index tuple, checked before anything is written.
class SliceIndexer {
 public:
  SliceIndexer(const pock_tensor_desc& data, const pock_tensor_desc& indices, int64_t batch)
      : data_(data), indices_(indices), batch_(static_cast<int>(batch)), k_(indices.dims[indices.rank - 1]) {
    for (int d = batch_ + static_cast<int>(k_); d < data.rank; ++d) slice_ *= data.dims[d];
    for (int d = 0; d < batch_; ++d) batches_ *= data.dims[d];
    tuples_ = numel(indices) / k_;
  }

  int64_t slice() const { return slice_; }      // elements per addressed slice
  int64_t tuples() const { return tuples_; }    // index tuples, all batches together

  Status check(const KernelCall& c) const {
    for (int64_t t = 0; t < tuples_; ++t) {
      for (int64_t j = 0; j < k_; ++j) {
        const int64_t dim = data_.dims[batch_ + j], v = raw(t * k_ + j);
        if (v < -dim || v >= dim) {
          return c.error("index " + std::to_string(v) + " of tuple " + std::to_string(t) + " is out of range [" +
                         std::to_string(-dim) + ", " + std::to_string(dim) + ") for data axis " + std::to_string(batch_ + j));
        }
      }
    }
    return Status::ok();
  }

  // Element offset in data of the slice tuple t addresses.
  int64_t offset(int64_t t) const {
    const int64_t per_batch = tuples_ / batches_;
    int64_t within = 0;
    for (int64_t j = 0; j < k_; ++j) {
      const int64_t dim = data_.dims[batch_ + j];
      int64_t v = raw(t * k_ + j);
      if (v < 0) v += dim;
      within = within * dim + v;
    }
    int64_t batch_size = slice_;  // elements of data per batch entry
    for (int64_t j = 0; j < k_; ++j) batch_size *= data_.dims[batch_ + j];
    return (t / per_batch) * batch_size + within * slice_;
  }

 private:
  int64_t raw(int64_t e) const {
    return indices_.dtype == POCK_I32 ? static_cast<const int32_t*>(indices_.data)[e]
                                      : static_cast<const int64_t*>(indices_.data)[e];
  }

  const pock_tensor_desc& data_;
  const pock_tensor_desc& indices_;
  int batch_;
  int64_t k_, slice_ = 1, batches_ = 1, tuples_ = 0;
};

Status gather_nd(const KernelCall& c, const params::GatherScatterParams& p) {
  const SliceIndexer at(c.in(0), c.in(1), p.batch_dims);
  POCK_RETURN_IF_ERROR(at.check(c));
  const size_t bytes = static_cast<size_t>(at.slice()) * dtype_size(static_cast<DType>(c.in(0).dtype));
  const auto* src = static_cast<const uint8_t*>(c.in(0).data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  const size_t size = dtype_size(static_cast<DType>(c.in(0).dtype));
  for (int64_t t = 0; t < at.tuples(); ++t) std::memcpy(dst + t * bytes, src + at.offset(t) * size, bytes);
  return Status::ok();
}

template <typename T>
Status scatter_nd_typed(const KernelCall& c, const params::GatherScatterParams& p) {
  const SliceIndexer at(c.in(0), c.in(1), p.batch_dims);
  POCK_RETURN_IF_ERROR(at.check(c));
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  const T* updates = c.in_data<T>(2);
  T* out = c.out_data<T>(0);
  for (int64_t t = 0; t < at.tuples(); ++t) {
    T* slot = out + at.offset(t);
    const T* u = updates + t * at.slice();
    for (int64_t e = 0; e < at.slice(); ++e) slot[e] = combine(p.reduction, slot[e], u[e]);
  }
  return Status::ok();
}

Status scatter_nd_bytes(const KernelCall& c, const params::GatherScatterParams& p) {
  const SliceIndexer at(c.in(0), c.in(1), p.batch_dims);
  POCK_RETURN_IF_ERROR(at.check(c));
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  const size_t size = dtype_size(static_cast<DType>(c.in(0).dtype));
  const size_t bytes = static_cast<size_t>(at.slice()) * size;
  const auto* src = static_cast<const uint8_t*>(c.in(2).data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  for (int64_t t = 0; t < at.tuples(); ++t) std::memcpy(dst + at.offset(t) * size, src + t * bytes, bytes);
  return Status::ok();
}

// ScatterNDGrad (dy, data, indices, updates): the walk of kernels/scatter_nd_grad.hpp over all
// columns, with its scratch sized at prepare.
struct ScatterNDGradState {
  params::GatherScatterParams p;
  std::vector<int64_t> offsets, winner;
  std::vector<double> running;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const pock_tensor_desc& indices = op.inputs[2];
    offsets.resize(static_cast<size_t>(numel(indices) / indices.dims[indices.rank - 1]));
    winner.resize(static_cast<size_t>(numel(op.inputs[1])));
    running.resize(winner.size());
    return Status::ok();
  }
};

Status scatter_nd_grad(const KernelCall& c, ScatterNDGradState& s) {
  const SliceIndexer at(c.in(1), c.in(2), s.p.batch_dims);
  POCK_RETURN_IF_ERROR(at.check(c));
  for (int64_t t = 0; t < at.tuples(); ++t) s.offsets[static_cast<size_t>(t)] = at.offset(t);
  const nd_grad::Walk w{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(3), s.offsets.data(), at.tuples(),
                           at.slice(), c.out_data<float>(0), c.out_data<float>(1), s.running.data(), s.winner.data()};
  nd_grad::start(w, numel(c.in(1)));
  nd_grad::columns(w, s.p.reduction, 0, at.slice());
  return Status::ok();
}

using ScatterFn = Status (*)(const KernelCall&, const params::GatherScatterParams&);

// Reductions need arithmetic (the schema allows them on f32, i32 and i64); plain writes move bytes.
template <ScatterFn F32, ScatterFn I32, ScatterFn I64, ScatterFn Bytes>
Status scatter_by_dtype(const KernelCall& c, const params::GatherScatterParams& p) {
  switch (static_cast<DType>(c.in(0).dtype)) {
    case DType::kF32: return F32(c, p);
    case DType::kI32: return I32(c, p);
    case DType::kI64: return I64(c, p);
    default: break;
  }
  if (p.reduction != ScatterReduction::kNone) return c.error("a reduction needs f32, i32 or i64 data");
  return Bytes(c, p);
}

constexpr ScatterFn scatter = scatter_by_dtype<scatter_elements<float>, scatter_elements<int32_t>,
                                               scatter_elements<int64_t>, scatter_bytes>;
constexpr ScatterFn scatter_nd = scatter_by_dtype<scatter_nd_typed<float>, scatter_nd_typed<int32_t>,
                                                  scatter_nd_typed<int64_t>, scatter_nd_bytes>;

}  // namespace

void register_ref_gather_scatter(KernelTable& t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    t.add(typed_kernel<params::GatherScatterParams, gather_elements>("GatherElements", dtype));
    t.add(typed_kernel<params::GatherScatterParams, scatter>("ScatterElements", dtype));
    t.add(typed_kernel<params::GatherScatterParams, gather_nd>("GatherND", dtype));
    t.add(typed_kernel<params::GatherScatterParams, scatter_nd>("ScatterND", dtype));
  }
  t.add(prepared_kernel<ScatterNDGradState, scatter_nd_grad>("ScatterNDGrad", DType::kF32));
}

}  // namespace pock
