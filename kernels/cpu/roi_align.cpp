// cpu kernels of the roi_align family: RoiAlign and RoiAlignGrad (avg and max), on the sampling grid
// every backend shares (kernels/roi_align_sampling.hpp, its geometry in double as ref). Where ref
// recomputes a region's samples for every channel, these compute them once for a block of
// channels, a chunk at a time, and apply each chunk to one channel after another (the channel's
// plane stays in cache; f32 sums).
//   RoiAlign: (region, channel) pairs split over threads; a tile's consecutive channels of one
//     region share the samples.
//   RoiAlignGrad: channels split over threads, so that each thread owns the dx planes it adds into
//     (regions of one image overlap); per region its samples are computed once per tile.
// A tile's sums (and max's winning corners) live in buffers made at prepare: a step allocates
// nothing.
#include <algorithm>
#include <cstring>
#include <limits>
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
  int64_t at = -1;   // -1: the bin has no sample
};

// A run of a region's samples, each with its bin and its bin's sample count: computed once, then
// applied to every channel of a block while that channel's plane is in cache.
struct SampleChunk {
  static constexpr size_t kCapacity = 256;
  Sample sample[kCapacity];
  float averaged[kCapacity][4];  // avg: the weights over the bin's sample count
  int64_t bin[kCapacity];
  size_t size = 0;
};

// Calls apply(chunk) for the samples of region `roi`, kCapacity at a time.
template <typename Apply>
void for_each_chunk(const float* roi, int64_t h, int64_t w, const RoiAlignParams& p, SampleChunk& chunk, Apply&& apply) {
  chunk.size = 0;
  roi::for_each_sample(roi, h, w, p, [&](int64_t bin, const Sample& s, int64_t count) {
    chunk.sample[chunk.size] = s;
    chunk.bin[chunk.size] = bin;
    for (int t = 0; t < 4; ++t) chunk.averaged[chunk.size][t] = static_cast<float>(s.w[t] / static_cast<double>(count));
    if (++chunk.size == SampleChunk::kCapacity) {
      apply(static_cast<const SampleChunk&>(chunk));
      chunk.size = 0;
    }
  });
  if (chunk.size > 0) apply(static_cast<const SampleChunk&>(chunk));
}

// Folds the chunk's samples of one channel's plane into that channel's winners (one per bin): the
// first of equal values stays, as the forward's max keeps it.
void update_winners(const SampleChunk& chunk, const float* plane, Winner* win) {
  for (size_t k = 0; k < chunk.size; ++k) {
    double v = 0;
    const Sample& s = chunk.sample[k];
    const int t = roi::max_tap(s, plane, &v);
    Winner& best = win[chunk.bin[k]];
    if (best.at >= 0 && !(best.value < v)) continue;
    best.value = v, best.weight = static_cast<float>(s.w[t]), best.at = s.at[t];
  }
}

struct RoiAlignPlan {
  RoiAlignParams p;
  int64_t images = 0, channels = 0, h = 0, w = 0, regions = 0, bins = 0;
  size_t items = 0, tile = 1;        // (region, channel) pairs, or channels for the gradient
  std::vector<SampleChunk> chunks;   // per tile
  std::vector<float> sums;           // per tile, avg forward: [tile channels, bins]
  std::vector<double> maxima;        // per tile, max forward: [tile channels, bins]
  std::vector<Winner> winners;       // per tile, max gradient: [tile channels, bins]
  pthreadpool_t pool = nullptr;

  // `x` is the feature map's descriptor (input 0 of RoiAlign, 1 of RoiAlignGrad).
  Status prepare(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& rois, bool per_channel) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    images = x.dims[0], channels = x.dims[1], h = x.dims[2], w = x.dims[3];
    regions = rois.dims[0];
    bins = p.output_height * p.output_width;
    pool = thread_pool_for(op.num_threads);
    items = static_cast<size_t>(per_channel ? channels : regions * channels);
    tile = balanced_tile(pool, items, 1);
    const size_t tiles = (items + tile - 1) / tile, slots = tiles * tile * static_cast<size_t>(bins);
    chunks.resize(tiles);
    if (per_channel && p.max) winners.resize(slots);
    if (!per_channel) (p.max ? maxima.resize(slots) : sums.resize(slots));
    return Status::ok();
  }
};

struct ForwardPlan : RoiAlignPlan {
  Status prepare(const pock_op_desc& op) { return RoiAlignPlan::prepare(op, op.inputs[0], op.inputs[1], false); }
};
struct GradPlan : RoiAlignPlan {
  Status prepare(const pock_op_desc& op) { return RoiAlignPlan::prepare(op, op.inputs[1], op.inputs[2], true); }
};

Status roi_align(const KernelCall& c, ForwardPlan& plan) {
  const RoiAlignParams& p = plan.p;
  POCK_RETURN_IF_ERROR(check_batch_indices(c, plan.images, c.in(2)));
  const float* x = c.in_data<float>(0);
  const float* rois = c.in_data<float>(1);
  float* y = c.out_data<float>(0);
  const int64_t plane = plan.h * plan.w, bins = plan.bins, channels = plan.channels;
  parallel_for(plan.pool, plan.items, plan.tile, [&](size_t begin, size_t end) {
    const size_t t = begin / plan.tile, slot = t * plan.tile * static_cast<size_t>(bins);
    SampleChunk& chunk = plan.chunks[t];
    // Runs of channels of one region: [first, first + n) of region r.
    for (size_t item = begin; item < end;) {
      const int64_t r = static_cast<int64_t>(item) / channels, first = static_cast<int64_t>(item) % channels;
      const int64_t n = std::min<int64_t>(channels - first, static_cast<int64_t>(end - item));
      const float* map = x + (batch_index(c.in(2), r) * channels + first) * plane;
      float* out = y + (r * channels + first) * bins;
      if (p.max) {
        // Only the values: ref's std::max order, in double; a bin without samples is 0.
        double* best = plan.maxima.data() + slot;
        std::fill(best, best + n * bins, -std::numeric_limits<double>::infinity());
        bool sampled = false;
        for_each_chunk(rois + r * 4, plan.h, plan.w, p, chunk, [&](const SampleChunk& samples) {
          sampled = true;
          for (int64_t ch = 0; ch < n; ++ch) {
            const float* m = map + ch * plane;
            double* acc = best + ch * bins;
            for (size_t k = 0; k < samples.size; ++k) {
              const Sample& q = samples.sample[k];
              double v = q.w[0] * m[q.at[0]];
              for (int t = 1; t < 4; ++t) v = std::max(v, q.w[t] * m[q.at[t]]);
              acc[samples.bin[k]] = std::max(acc[samples.bin[k]], v);
            }
          }
        });
        for (int64_t k = 0; k < n * bins; ++k) out[k] = sampled ? static_cast<float>(best[k]) : 0.0f;
      } else {
        float* sum = plan.sums.data() + slot;
        std::fill(sum, sum + n * bins, 0.0f);
        for_each_chunk(rois + r * 4, plan.h, plan.w, p, chunk, [&](const SampleChunk& samples) {
          for (int64_t ch = 0; ch < n; ++ch) {
            const float* m = map + ch * plane;
            float* acc = sum + ch * bins;
            for (size_t k = 0; k < samples.size; ++k) {
              const float* wt = samples.averaged[k];
              const int64_t* at = samples.sample[k].at;
              acc[samples.bin[k]] += wt[0] * m[at[0]] + wt[1] * m[at[1]] + wt[2] * m[at[2]] + wt[3] * m[at[3]];
            }
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
    const size_t t = begin / plan.tile;
    SampleChunk& chunk = plan.chunks[t];
    const int64_t first = static_cast<int64_t>(begin), n = static_cast<int64_t>(end - begin);
    Winner* win = p.max ? plan.winners.data() + t * plan.tile * static_cast<size_t>(bins) : nullptr;
    for (int64_t r = 0; r < plan.regions; ++r) {
      const int64_t image = (batch_index(c.in(3), r) * channels + first) * plane;
      const float* g = dy + (r * channels + first) * bins;
      float* d = dx + image;
      if (!p.max) {
        for_each_chunk(rois + r * 4, plan.h, plan.w, p, chunk, [&](const SampleChunk& samples) {
          for (int64_t ch = 0; ch < n; ++ch) {
            float* m = d + ch * plane;
            const float* gc = g + ch * bins;
            for (size_t k = 0; k < samples.size; ++k) {
              const float* wt = samples.averaged[k];
              const int64_t* at = samples.sample[k].at;
              const float gb = gc[samples.bin[k]];
              for (int q = 0; q < 4; ++q) m[at[q]] += wt[q] * gb;
            }
          }
        });
        continue;
      }
      std::fill(win, win + n * bins, Winner{});
      for_each_chunk(rois + r * 4, plan.h, plan.w, p, chunk, [&](const SampleChunk& samples) {
        for (int64_t ch = 0; ch < n; ++ch) update_winners(samples, x + image + ch * plane, win + ch * bins);
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
