// Reference kernels of the resample family. Resize is separable: it resamples one axis after
// another, each output position a weighted sum of up to four input positions (its taps,
// kernels/resample_taps.hpp, which every backend shares). ResizeGrad applies the transposed taps,
// so both agree on every rounding decision.
#include <algorithm>
#include <string_view>
#include <vector>

#include "kernels/params/resample.hpp"
#include "kernels/resample_taps.hpp"
#include "kernels/ref/ref_util.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

using params::ResizeParams;

struct AxisTaps {
  int count = 0;                // taps per output position: 2 or 4
  std::vector<int64_t> index;   // [out * count], clamped into the input
  std::vector<double> weight;   // [out * count]
};

AxisTaps axis_taps(const ResizeParams& p, double scale, int64_t in, int64_t out) {
  AxisTaps t;
  t.count = resize_tap_count(p.mode);
  t.index.resize(static_cast<size_t>(out * t.count));
  t.weight.resize(t.index.size());
  for (int64_t j = 0; j < out; ++j) {
    resize_taps_at(p, scale, in, j, &t.index[static_cast<size_t>(j * t.count)], &t.weight[static_cast<size_t>(j * t.count)]);
  }
  return t;
}

// One axis of a [outer, length, inner] view: forward gathers through the taps, transpose
// scatters back through them.
void resample_axis(const std::vector<double>& src, std::vector<double>& dst, const AxisTaps& t, int64_t outer,
                   int64_t src_len, int64_t dst_len, int64_t inner, bool transpose) {
  dst.assign(static_cast<size_t>(outer * dst_len * inner), 0.0);
  const int64_t positions = transpose ? src_len : dst_len;  // the resized side
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < positions; ++j) {
      for (int k = 0; k < t.count; ++k) {
        const double w = t.weight[static_cast<size_t>(j * t.count + k)];
        if (w == 0.0) continue;
        const int64_t i = t.index[static_cast<size_t>(j * t.count + k)];
        const int64_t from = transpose ? j : i, to = transpose ? i : j;
        const double* s = &src[static_cast<size_t>((o * src_len + from) * inner)];
        double* d = &dst[static_cast<size_t>((o * dst_len + to) * inner)];
        for (int64_t e = 0; e < inner; ++e) d[e] += w * s[e];
      }
    }
  }
}

bool unchanged(const ResizeParams& p, int d, int64_t in, int64_t out) { return in == out && p.scales[static_cast<size_t>(d)] == 1.0; }

// small: Resize's input shape; large: its output shape. Forward maps small -> large; transpose
// (ResizeGrad) maps large -> small. Axes whose size and scale are both unchanged are the
// identity under every mode and are skipped. The taps and the buffers of every stage are made at
// prepare: a step allocates nothing.
struct ResizeState {
  ResizeParams p;
  bool transpose = false;
  std::vector<AxisTaps> taps;     // per axis (count 0: skipped)
  std::vector<double> cur, next;  // capacity for the largest stage

  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    transpose = std::string_view(op.op) == "ResizeGrad";
    const pock_tensor_desc& small = transpose ? op.outputs[0] : op.inputs[0];
    const pock_tensor_desc& large = transpose ? op.inputs[0] : op.outputs[0];
    taps.resize(static_cast<size_t>(small.rank));
    Shape dims = shape_of(transpose ? large : small);
    size_t largest = static_cast<size_t>(numel(dims));
    for (int d = small.rank - 1; d >= 0; --d) {
      const int64_t in = small.dims[d], out = large.dims[d];
      if (unchanged(p, d, in, out)) continue;
      taps[static_cast<size_t>(d)] = axis_taps(p, p.scales[static_cast<size_t>(d)], in, out);
      dims[static_cast<size_t>(d)] = transpose ? in : out;
      largest = std::max(largest, static_cast<size_t>(numel(dims)));
    }
    cur.reserve(largest);
    next.reserve(largest);
    return Status::ok();
  }
};

Status resample(const KernelCall& c, ResizeState& s) {
  const pock_tensor_desc& small = s.transpose ? c.out(0) : c.in(0);
  const pock_tensor_desc& large = s.transpose ? c.in(0) : c.out(0);
  const int rank = small.rank;
  s.cur.assign(c.in_data<float>(0), c.in_data<float>(0) + numel(c.in(0)));
  int64_t dims[kMaxRank];
  for (int d = 0; d < rank; ++d) dims[d] = c.in(0).dims[d];
  for (int d = rank - 1; d >= 0; --d) {  // innermost first, as ONNX's reference nests them
    const int64_t in = small.dims[d], out = large.dims[d];
    if (unchanged(s.p, d, in, out)) continue;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < d; ++k) outer *= dims[k];
    for (int k = d + 1; k < rank; ++k) inner *= dims[k];
    const int64_t target = s.transpose ? in : out;
    resample_axis(s.cur, s.next, s.taps[static_cast<size_t>(d)], outer, dims[d], target, inner, s.transpose);
    dims[d] = target;
    s.cur.swap(s.next);
  }
  float* y = c.out_data<float>(0);
  for (size_t e = 0; e < s.cur.size(); ++e) y[e] = static_cast<float>(s.cur[e]);
  return Status::ok();
}

}  // namespace

void register_ref_resample(KernelTable& t) {
  t.add(prepared_kernel<ResizeState, resample>("Resize", DType::kF32));
  t.add(prepared_kernel<ResizeState, resample>("ResizeGrad", DType::kF32));
}

}  // namespace pock
