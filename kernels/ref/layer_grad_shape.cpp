// Reference kernels of SliceGrad (zeros, then dy written at starts + i * steps along every axis)
// and PadGrad.
#include <cstring>

#include "kernels/params/shape.hpp"
#include "kernels/ref/layer_grad.hpp"

namespace pock {
namespace {

Status slice_grad(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc& dyd = c.in(0);
  const pock_tensor_desc& dxd = c.out(0);
  const IntSpan starts = span_of(p.starts);
  const IntSpan steps = span_of(p.steps);
  if (starts.size != dyd.rank || steps.size != dyd.rank) return c.error("starts and steps need one value per axis");
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::memset(dx, 0, static_cast<size_t>(numel(dxd)) * sizeof(float));
  const int64_t total = numel(dyd);
  if (total == 0) return Status::ok();

  int64_t stride[kMaxRank] = {};
  int64_t offset = 0;  // dx offset of the current dy element
  for (int64_t d = dxd.rank - 1, s = 1; d >= 0; --d) {
    stride[d] = s;
    s *= dxd.dims[d];
  }
  for (int d = 0; d < dxd.rank; ++d) offset += starts[d] * stride[d];
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0; o < total; ++o) {
    dx[offset] = dy[o];
    for (int d = dyd.rank - 1; d >= 0; --d) {
      ++idx[d];
      offset += steps[d] * stride[d];
      if (idx[d] < dyd.dims[d]) break;
      offset -= steps[d] * stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  return Status::ok();
}

// Each dy element adds to the dx element its forward Pad copied (params::pad_source per axis).
Status pad_grad(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc& dyd = c.in(0);
  const pock_tensor_desc& dxd = c.out(0);
  const IntSpan pads = span_of(p.pads);
  if (pads.size != 2 * dyd.rank) return c.error("pads need two values per axis");
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::memset(dx, 0, static_cast<size_t>(numel(dxd)) * sizeof(float));
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0, total = numel(dyd); o < total; ++o) {
    int64_t offset = 0;
    for (int d = 0; d < dyd.rank; ++d) {
      offset = offset * dxd.dims[d] + params::pad_source(idx[d] - pads[d], dxd.dims[d], p.pad_mode);
    }
    dx[offset] += dy[o];
    for (int d = dyd.rank - 1; d >= 0; --d) {
      if (++idx[d] < dyd.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_shape_grad(KernelTable& t) {
  t.add(typed_kernel<params::ShapeParams, slice_grad>("SliceGrad", DType::kF32));
  t.add(typed_kernel<params::ShapeParams, pad_grad>("PadGrad", DType::kF32));
}

}  // namespace pock
