// Reference kernels of the sequence backward ops: the embedding scatter-add and dropout's mask.
#include <cstring>
#include <string>

#include "kernels/params/sequence.hpp"
#include "kernels/ref/layer_grad.hpp"

namespace pock {
namespace {

int64_t index_at(const KernelCall& c, int64_t i) {
  return c.in(1).dtype == POCK_I32 ? c.in_data<int32_t>(1)[i] : c.in_data<int64_t>(1)[i];
}

// GatherGrad(dy, indices) -> ddata: data seen as [outer, extent, inner] around the axis and dy as
// [outer, count, inner]; row i of dy is added to row indices[i] (negative counts from the end).
// Rows are scattered in float: gathering instead would scan every index for every data row.
Status gather_grad(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& dxd = c.out(0);
  int64_t axis = p.axis;
  if (axis < 0) axis += dxd.rank;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dxd.rank; ++d) {
    if (d < axis) outer *= dxd.dims[d];
    if (d > axis) inner *= dxd.dims[d];
  }
  const int64_t extent = dxd.dims[axis];
  const int64_t count = numel(c.in(1));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = index_at(c, i);
    if (index < -extent || index >= extent) {
      return c.error("index " + std::to_string(index) + " out of range for axis extent " + std::to_string(extent));
    }
  }
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::memset(dx, 0, static_cast<size_t>(numel(dxd)) * sizeof(float));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t row = index_at(c, i);
      if (row < 0) row += extent;
      const float* src = dy + (o * count + i) * inner;
      float* dst = dx + (o * extent + row) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[k] += src[k];
    }
  }
  return Status::ok();
}

// DropoutGrad(dy, mask) -> dy * mask / (1 - ratio): the kept elements' forward scale.
Status dropout_grad(const KernelCall& c, const params::SequenceParams& p) {
  const double ratio = p.ratio;
  const double scale = 1.0 / (1.0 - ratio);  // the schema keeps ratio below 1
  const float* dy = c.in_data<float>(0);
  const uint8_t* mask = c.in_data<uint8_t>(1);
  float* dx = c.out_data<float>(0);
  // dy * mask * scale, as the forward computes y: a NaN in dy stays NaN.
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) dx[i] = static_cast<float>(dy[i] * (mask[i] ? scale : 0.0));
  return Status::ok();
}

}  // namespace

void register_ref_sequence_grad(KernelTable& t) {
  t.add(typed_kernel<params::SequenceParams, gather_grad>("GatherGrad", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, dropout_grad>("DropoutGrad", DType::kF32));
}

}  // namespace pock
