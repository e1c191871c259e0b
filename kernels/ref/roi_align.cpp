// Reference kernels of the roi_align family, following ONNX's RoiAlign (as onnxruntime computes
// it), on the sampling grid every backend shares (kernels/roi_align_sampling.hpp). avg averages a
// bin's samples; max takes the largest weighted corner value of any sample (onnxruntime's
// definition), the first of equal ones. The gradient spreads dy back with the avg weights, or, for
// max, gives it to the winning corner times its weight.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/params/roi_align.hpp"
#include "kernels/ref/ref_util.hpp"
#include "kernels/roi_align_sampling.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

using params::RoiAlignParams;

using roi::Sample;

int64_t batch_index(const pock_tensor_desc& t, int64_t r) {
  return t.dtype == POCK_I32 ? static_cast<const int32_t*>(t.data)[r] : static_cast<const int64_t*>(t.data)[r];
}

Status check_batch_indices(const KernelCall& c, const pock_tensor_desc& x, const pock_tensor_desc& batch) {
  for (int64_t r = 0; r < batch.dims[0]; ++r) {
    const int64_t b = batch_index(batch, r);
    if (b < 0 || b >= x.dims[0]) {
      return c.error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is out of range [0, " +
                     std::to_string(x.dims[0]) + ")");
    }
  }
  return Status::ok();
}

// Calls f(plane, roi, out) for every (region, channel): the offset of the region's map plane in x
// (or dx), the region's 4 coordinates, and the offset of its bins in y (or dy). Inputs x, rois and
// batch_indices start at input `first`.
template <typename F>
Status for_each_region_plane(const KernelCall& c, int first, const RoiAlignParams& p, F&& f) {
  const pock_tensor_desc& x = c.in(first);
  POCK_RETURN_IF_ERROR(check_batch_indices(c, x, c.in(first + 2)));
  const int64_t channels = x.dims[1], plane = x.dims[2] * x.dims[3], bins = p.output_height * p.output_width;
  for (int64_t r = 0; r < c.in(first + 1).dims[0]; ++r) {
    const int64_t b = batch_index(c.in(first + 2), r);
    for (int64_t ch = 0; ch < channels; ++ch) {
      f((b * channels + ch) * plane, c.in_data<float>(first + 1) + r * 4, (r * channels + ch) * bins);
    }
  }
  return Status::ok();
}

// The parameters and one region's bins (sums, and whether max has seen a sample), sized at
// prepare: a step allocates nothing.
struct RoiAlignState {
  RoiAlignParams p;
  std::vector<double> acc;
  std::vector<bool> seen;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    acc.resize(static_cast<size_t>(p.output_height * p.output_width));
    seen.resize(acc.size());
    return Status::ok();
  }
};

Status roi_align(const KernelCall& c, RoiAlignState& state) {
  const RoiAlignParams& p = state.p;
  const int64_t h = c.in(0).dims[2], w = c.in(0).dims[3], bins = p.output_height * p.output_width;
  std::vector<double>& acc = state.acc;
  std::vector<bool>& seen = state.seen;
  return for_each_region_plane(c, 0, p, [&](int64_t in, const float* roi, int64_t out) {
    const float* plane = c.in_data<float>(0) + in;
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(seen.begin(), seen.end(), false);
    roi::for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t count) {
      double& a = acc[static_cast<size_t>(bin)];
      if (!p.max) {
        for (int k = 0; k < 4; ++k) a += s.w[k] * plane[s.at[k]] / static_cast<double>(count);
        return;
      }
      double v = 0;
      roi::max_tap(s, plane, &v);
      a = seen[static_cast<size_t>(bin)] ? std::max(a, v) : v;
      seen[static_cast<size_t>(bin)] = true;
    });
    for (int64_t k = 0; k < bins; ++k) c.out_data<float>(0)[out + k] = static_cast<float>(acc[static_cast<size_t>(k)]);
  });
}

// max: each bin's winning corner (its offset and weight) and value, found as the forward finds it.
struct MaxTaps {
  std::vector<double> value, weight;
  std::vector<int64_t> at;
  std::vector<bool> seen;
};

struct RoiAlignGradState {
  RoiAlignParams p;
  MaxTaps best;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    const size_t bins = static_cast<size_t>(p.output_height * p.output_width);
    best.value.resize(bins);
    best.weight.resize(bins);
    best.at.resize(bins);
    best.seen.resize(bins);
    return Status::ok();
  }
};

Status roi_align_grad(const KernelCall& c, RoiAlignGradState& state) {
  const RoiAlignParams& p = state.p;
  MaxTaps& best = state.best;
  const int64_t h = c.in(1).dims[2], w = c.in(1).dims[3];
  std::memset(c.out(0).data, 0, static_cast<size_t>(c.out(0).nbytes));
  return for_each_region_plane(c, 1, p, [&](int64_t in, const float* roi, int64_t out) {
    float* plane = c.out_data<float>(0) + in;
    const float* dy = c.in_data<float>(0) + out;
    if (!p.max) {
      roi::for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t count) {
        for (int k = 0; k < 4; ++k) plane[s.at[k]] += static_cast<float>(s.w[k] * dy[bin] / static_cast<double>(count));
      });
      return;
    }
    const float* x = c.in_data<float>(1) + in;
    std::fill(best.seen.begin(), best.seen.end(), false);
    roi::for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t) {
      const auto b = static_cast<size_t>(bin);
      double v = 0;
      const int k = roi::max_tap(s, x, &v);
      if (best.seen[b] && !(best.value[b] < v)) return;
      best.seen[b] = true;
      best.value[b] = v, best.weight[b] = s.w[k], best.at[b] = s.at[k];
    });
    for (size_t b = 0; b < best.seen.size(); ++b) {
      if (best.seen[b]) plane[best.at[b]] += static_cast<float>(best.weight[b] * dy[b]);
    }
  });
}

}  // namespace

void register_ref_roi_align(KernelTable& t) {
  t.add(prepared_kernel<RoiAlignState, roi_align>("RoiAlign", DType::kF32));
  t.add(prepared_kernel<RoiAlignGradState, roi_align_grad>("RoiAlignGrad", DType::kF32));
}

}  // namespace pock
