// Pad of f32 tensors on the cpu backend in ONNX's constant (cropping included: negative pads),
// reflect and edge modes: a row copy per output row of the last axis, threaded over rows, with
// the row's borders filled or read through params::pad_source. TensorFlow-style "same" padding
// puts a constant Pad before every strided convolution (EfficientNet-Lite0), and its gradient is a
// Pad with the opposite pads; on ref both were ~28 % of the demo's sparse step.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/shape.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinParallelRows = 256;

bool pad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  params::ShapeParams p;
  return is_f32(x) && is_f32(y) && x.rank >= 1 && x.rank == y.rank && params::parse(op, &p).is_ok() &&
         p.pads.size() == static_cast<size_t>(2 * x.rank);
}

Status pad_run(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc &x = c.in(0), &y = c.out(0);
  const IntSpan pads = span_of(p.pads);  // all begins, then all ends
  const float fill = static_cast<float>(p.value);
  const int rank = y.rank;
  const int64_t width = y.dims[rank - 1], in_width = x.dims[rank - 1];
  const int64_t begin = pads[rank - 1];
  // The part of an output row that comes from the input row: [lo, hi) of the output.
  const int64_t lo = std::clamp<int64_t>(begin, 0, width);
  const int64_t hi = std::clamp<int64_t>(begin + in_width, 0, width);
  const int64_t rows = width == 0 ? 0 : numel(y) / width;
  const float* in = c.in_data<float>(0);
  float* out = c.out_data<float>(0);
  pthreadpool_t pool = static_cast<size_t>(rows) >= kMinParallelRows ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, static_cast<size_t>(rows), balanced_tile(pool, static_cast<size_t>(rows), 64),
               [&](size_t first, size_t last) {
                 for (size_t r = first; r < last; ++r) {
                   // The input row of output row r, or -1 when a leading index falls in a constant pad.
                   int64_t rest = static_cast<int64_t>(r), in_row = 0, in_stride = 1;
                   for (int d = rank - 2; d >= 0 && in_row >= 0; --d) {
                     const int64_t i = params::pad_source(rest % y.dims[d] - pads[d], x.dims[d], p.pad_mode);
                     rest /= y.dims[d];
                     if (i < 0) in_row = -1;
                     else in_row += i * in_stride;
                     in_stride *= x.dims[d];
                   }
                   float* o = out + static_cast<int64_t>(r) * width;
                   if (in_row < 0 || hi <= lo) {
                     std::fill(o, o + width, fill);
                     continue;
                   }
                   const float* row = in + in_row * in_width;
                   std::memcpy(o + lo, row + (lo - begin), static_cast<size_t>(hi - lo) * sizeof(float));
                   if (p.pad_mode == params::PadMode::kConstant) {
                     std::fill(o, o + lo, fill);
                     std::fill(o + hi, o + width, fill);
                     continue;
                   }
                   // Reflect and edge never crop: the borders are [0, begin) and [begin + in_width, width).
                   for (int64_t j = 0; j < lo; ++j) o[j] = row[params::pad_source(j - begin, in_width, p.pad_mode)];
                   for (int64_t j = hi; j < width; ++j) o[j] = row[params::pad_source(j - begin, in_width, p.pad_mode)];
                 }
               });
  return Status::ok();
}

}  // namespace

void register_pad(KernelTable& t) {
  t.add(typed_kernel<params::ShapeParams, pad_run>("Pad", DType::kF32, kCpuScore, pad_accepts));
}

}  // namespace pock::cpu
