// cpu kernels of the roi_align family: RoiAlign and RoiAlignGrad (avg and max), on the sampling grid
// every backend shares (kernels/roi_align_sampling.hpp, its geometry in double as ref). Where ref
// recomputes a region's samples for every channel, these compute each sample once for a block of
// channels and apply its taps to all of them (f32 sums).
//   RoiAlign: (region, channel) pairs split over threads; a tile's consecutive channels of one
//     region share the samples.
//   RoiAlignGrad: channels split over threads, so that each thread owns the dx planes it adds into
//     (regions of one image overlap); per region its samples are computed once per tile.
// A tile's sums (and max's winning corners) live in buffers made at prepare: a step allocates
// nothing.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/roi_align.hpp"
#include "kernels/roi_align_sampling.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

using params::RoiAlignParams;
using roi::Sample;

int64_t batch_index(const pock_tensor_desc& t, int64_t r) {
  return t.dtype == POCK_I32 ? static_cast<const int32_t*>(t.data)[r] : static_cast<const int64_t*>(t.data)[r];
}

Status check_batch_indices(const KernelCall& c, int64_t images, const pock_tensor_desc& batch) {
  for (int64_t r = 0; r < batch.dims[0]; ++r) {
    const int64_t b = batch_index(batch, r);
    if (b < 0 || b >= images) {
      return c.error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is out of range [0, " +
                     std::to_string(images) + ")");
    }
  }
  return Status::ok();
}

// A bin's winning corner in max mode: its value, weight and plane offset.
struct Winner {
  double value = 0;  // compared in double, as ref compares, so both pick the same corner
  float weight = 0;
  int64_t at = -1;  // -1: the bin has no sample
};

struct RoiAlignPlan {
  RoiAlignParams p;
  int64_t images = 0, channels = 0, h = 0, w = 0, regions = 0, bins = 0;
  size_t items = 0, tile = 1;  // (region, channel) pairs, or channels for the gradient
  std::vector<float> sums;     // per tile: [tile channels, bins]
  std::vector<Winner> winners; // per tile, max mode: [tile channels, bins]
  pthreadpool_t pool = nullptr;

  // `x` is the feature map's descriptor (input 0 of RoiAlign, 1 of RoiAlignGrad).
  Status prepare(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& rois, bool per_channel) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    images = x.dims[0], channels = x.dims[1], h = x.dims[2], w = x.dims[3];
    regions = rois.dims[0];
    bins = p.output_height * p.output_width;
    pool = thread_pool_for(op.num_threads);
    items = static_cast<size_t>(per_channel ? channels : regions * channels);
    tile = balanced_tile(pool, items, static_cast<size_t>(std::max<int64_t>(1, 256 / std::max<int64_t>(bins, 1))));
    const size_t tiles = (items + tile - 1) / tile, slots = tiles * tile * static_cast<size_t>(bins);
    if (p.max) winners.resize(slots);
    else sums.resize(slots);
    return Status::ok();
  }
};

struct ForwardPlan : RoiAlignPlan {
  Status prepare(const pock_op_desc& op) { return RoiAlignPlan::prepare(op, op.inputs[0], op.inputs[1], false); }
};
struct GradPlan : RoiAlignPlan {
  Status prepare(const pock_op_desc& op) { return RoiAlignPlan::prepare(op, op.inputs[1], op.inputs[2], true); }
};

// Folds sample s of a bin into the bin's winners of `n` channels whose planes are `plane` apart:
// the first of equal values stays, as the forward's max keeps it.
void update_winners(const Sample& s, const float* x, int64_t plane, int64_t n, Winner* win, int64_t bins) {
  for (int64_t ch = 0; ch < n; ++ch) {
    double v = 0;
    const int k = roi::max_tap(s, x + ch * plane, &v);
    Winner& best = win[ch * bins];
    if (best.at >= 0 && !(best.value < v)) continue;
    best.value = v, best.weight = static_cast<float>(s.w[k]), best.at = s.at[k];
  }
}

void clear_winners(Winner* win, size_t n) { std::fill(win, win + n, Winner{}); }

Status roi_align(const KernelCall& c, ForwardPlan& plan) {
  const RoiAlignParams& p = plan.p;
  POCK_RETURN_IF_ERROR(check_batch_indices(c, plan.images, c.in(2)));
  const float* x = c.in_data<float>(0);
  const float* rois = c.in_data<float>(1);
  float* y = c.out_data<float>(0);
  const int64_t plane = plan.h * plan.w, bins = plan.bins, channels = plan.channels;
  parallel_for(plan.pool, plan.items, plan.tile, [&](size_t begin, size_t end) {
    const size_t slot = begin / plan.tile * plan.tile * static_cast<size_t>(bins);
    // Runs of channels of one region: [first, last) of region r.
    for (size_t item = begin; item < end;) {
      const int64_t r = static_cast<int64_t>(item) / channels, first = static_cast<int64_t>(item) % channels;
      const int64_t last = std::min<int64_t>(channels, first + static_cast<int64_t>(end - item));
      const int64_t n = last - first;
      const float* map = x + (batch_index(c.in(2), r) * channels + first) * plane;
      float* out = y + (r * channels + first) * bins;
      if (p.max) {
        Winner* win = plan.winners.data() + slot;
        clear_winners(win, static_cast<size_t>(n * bins));
        roi::for_each_sample(rois + r * 4, plan.h, plan.w, p, [&](int64_t bin, const Sample& s, int64_t) {
          update_winners(s, map, plane, n, win + bin, bins);
        });
        for (int64_t k = 0; k < n * bins; ++k) out[k] = win[k].at >= 0 ? static_cast<float>(win[k].value) : 0.0f;
      } else {
        float* sum = plan.sums.data() + slot;
        std::fill(sum, sum + n * bins, 0.0f);
        roi::for_each_sample(rois + r * 4, plan.h, plan.w, p, [&](int64_t bin, const Sample& s, int64_t count) {
          float wt[4];
          for (int k = 0; k < 4; ++k) wt[k] = static_cast<float>(s.w[k] / static_cast<double>(count));
          for (int64_t ch = 0; ch < n; ++ch) {
            const float* m = map + ch * plane;
            sum[ch * bins + bin] += wt[0] * m[s.at[0]] + wt[1] * m[s.at[1]] + wt[2] * m[s.at[2]] + wt[3] * m[s.at[3]];
          }
        });
        std::copy(sum, sum + n * bins, out);
      }
      item += static_cast<size_t>(n);
    }
  });
  return Status::ok();
}

Status roi_align_grad(const KernelCall& c, GradPlan& plan) {
  const RoiAlignParams& p = plan.p;
  POCK_RETURN_IF_ERROR(check_batch_indices(c, plan.images, c.in(3)));
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* rois = c.in_data<float>(2);
  float* dx = c.out_data<float>(0);
  const int64_t plane = plan.h * plan.w, bins = plan.bins, channels = plan.channels;
  std::memset(dx, 0, c.out(0).nbytes);
  parallel_for(plan.pool, plan.items, plan.tile, [&](size_t begin, size_t end) {
    const int64_t first = static_cast<int64_t>(begin), n = static_cast<int64_t>(end - begin);
    Winner* win = p.max ? plan.winners.data() + begin / plan.tile * plan.tile * static_cast<size_t>(bins) : nullptr;
    for (int64_t r = 0; r < plan.regions; ++r) {
      const int64_t image = (batch_index(c.in(3), r) * channels + first) * plane;
      const float* g = dy + (r * channels + first) * bins;
      float* d = dx + image;
      if (!p.max) {
        roi::for_each_sample(rois + r * 4, plan.h, plan.w, p, [&](int64_t bin, const Sample& s, int64_t count) {
          float wt[4];
          for (int k = 0; k < 4; ++k) wt[k] = static_cast<float>(s.w[k] / static_cast<double>(count));
          for (int64_t ch = 0; ch < n; ++ch) {
            const float gb = g[ch * bins + bin];
            float* m = d + ch * plane;
            for (int k = 0; k < 4; ++k) m[s.at[k]] += wt[k] * gb;
          }
        });
        continue;
      }
      clear_winners(win, static_cast<size_t>(n * bins));
      roi::for_each_sample(rois + r * 4, plan.h, plan.w, p, [&](int64_t bin, const Sample& s, int64_t) {
        update_winners(s, x + image, plane, n, win + bin, bins);
      });
      for (int64_t ch = 0; ch < n; ++ch) {
        for (int64_t bin = 0; bin < bins; ++bin) {
          const Winner& best = win[ch * bins + bin];
          if (best.at >= 0) d[ch * plane + best.at] += best.weight * g[ch * bins + bin];
        }
      }
    }
  });
  return Status::ok();
}

bool accepts(const pock_op_desc& op) {
  const int first = op.num_inputs == 4 ? 1 : 0;  // RoiAlignGrad's dy comes first
  const pock_tensor_desc& batch = op.inputs[first + 2];
  return op.inputs[first].rank == 4 && (batch.dtype == POCK_I32 || batch.dtype == POCK_I64);
}

}  // namespace

void register_roi_align(KernelTable& t) {
  t.add(prepared_kernel<ForwardPlan, roi_align>("RoiAlign", DType::kF32, kCpuScore, accepts));
  t.add(prepared_kernel<GradPlan, roi_align_grad>("RoiAlignGrad", DType::kF32, kCpuScore, accepts));
}

}  // namespace pock::cpu
