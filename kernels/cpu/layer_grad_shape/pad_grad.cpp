// PadGrad on the cpu backend: the gradient of reflect and edge padding for f32. Each row of dy
// adds its interior to the dx row it was copied from in one vectorized pass, and its border
// elements one by one. One thread: border rows of dy add into the same dx rows as interior ones.
#include <cstring>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/params/shape.hpp"

namespace pock::cpu {
namespace {

POCK_SIMD_CLONES void add_row(const float* src, float* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

bool pad_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &dy = op.inputs[0], &dx = op.outputs[0];
  params::ShapeParams p;
  return is_f32(dy) && is_f32(dx) && dy.rank >= 1 && dy.rank == dx.rank && params::parse(op, &p).is_ok() &&
         p.pads.size() == static_cast<size_t>(2 * dy.rank) && p.pad_mode != params::PadMode::kConstant;
}

Status pad_grad_run(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc &dyd = c.in(0), &dxd = c.out(0);
  const IntSpan pads = span_of(p.pads);  // all begins, then all ends
  const int rank = dyd.rank;
  const int64_t width = dyd.dims[rank - 1], in_width = dxd.dims[rank - 1], begin = pads[rank - 1];
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::memset(dx, 0, static_cast<size_t>(numel(dxd)) * sizeof(float));
  const int64_t rows = width == 0 ? 0 : numel(dyd) / width;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, in_row = 0, in_stride = 1;
    for (int d = rank - 2; d >= 0; --d) {
      in_row += params::pad_source(rest % dyd.dims[d] - pads[d], dxd.dims[d], p.pad_mode) * in_stride;
      rest /= dyd.dims[d];
      in_stride *= dxd.dims[d];
    }
    const float* g = dy + r * width;
    float* row = dx + in_row * in_width;
    add_row(g + begin, row, in_width);
    for (int64_t j = 0; j < begin; ++j) row[params::pad_source(j - begin, in_width, p.pad_mode)] += g[j];
    for (int64_t j = begin + in_width; j < width; ++j) row[params::pad_source(j - begin, in_width, p.pad_mode)] += g[j];
  }
  return Status::ok();
}

}  // namespace

void register_pad_grad(KernelTable& t) {
  t.add(typed_kernel<params::ShapeParams, pad_grad_run>("PadGrad", DType::kF32, kCpuScore, pad_grad_accepts));
}

}  // namespace pock::cpu
