// Reference kernels of the gather_scatter family. Shapes and attributes were checked by the schema;
// what only the data can break (an index out of range) is checked here, for every index before
// anything is written.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/params/gather_scatter.hpp"
#include "kernels/ref/ref_util.hpp"

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

// Reductions need arithmetic (the schema allows them on f32, i32 and i64); plain writes move bytes.
Status scatter(const KernelCall& c, const params::GatherScatterParams& p) {
  switch (static_cast<DType>(c.in(0).dtype)) {
    case DType::kF32: return scatter_elements<float>(c, p);
    case DType::kI32: return scatter_elements<int32_t>(c, p);
    case DType::kI64: return scatter_elements<int64_t>(c, p);
    default: break;
  }
  if (p.reduction != ScatterReduction::kNone) return c.error("a reduction needs f32, i32 or i64 data");
  return scatter_bytes(c, p);
}

}  // namespace

void register_ref_gather_scatter(KernelTable& t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    t.add(typed_kernel<params::GatherScatterParams, gather_elements>("GatherElements", dtype));
    t.add(typed_kernel<params::GatherScatterParams, scatter>("ScatterElements", dtype));
  }
}

}  // namespace pock
