// The CUDA sequence family: Gather (any dtype, i32/i64 indices), Rope, CausalMask, Dropout and
// DropoutTrain (ref's counter-based mask, bit for bit), element-wise, and CachedAttention (the
// cache rows written, then a block per query with an online softmax per warp; head dims up to
// 512). Logic in sequence_logic.hpp, checked against ref on the host by
// tests/cuda_logic/test_sequence_logic.cpp.
#include <cmath>

#include "kernels/cuda/checked_kernel.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/row_team.cuh"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"
#include "pock/types.hpp"

namespace pock::cuda {
namespace {

template <typename Word, typename Index>
cudaError_t launch_gather(const KernelCall& c, const GatherLayout& l, ErrorSite error) {
  const GatherElement<Word, Index> element{c.in_data<Word>(0), c.in_data<Index>(1), c.out_data<Word>(0), l, error};
  return launch_map(l.outer * l.count * l.inner, current_stream(), element);
}

template <typename Word>
cudaError_t launch_gather(const KernelCall& c, const GatherLayout& l, ErrorSite error) {
  return c.in(1).dtype == POCK_I32 ? launch_gather<Word, int32_t>(c, l, error)
                                   : launch_gather<Word, int64_t>(c, l, error);
}

// ref's words for an index outside the axis.
std::string gather_index_error(const pock_op_desc& op, const params::SequenceParams& p) {
  const int rank = op.inputs[0].rank;
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  const int64_t extent = op.inputs[0].dims[axis];
  return "an index is out of range [" + std::to_string(-extent) + ", " + std::to_string(extent) + ") for axis " +
         std::to_string(axis);
}

Status gather(const KernelCall& c, const params::SequenceParams& p, ErrorSite error) {
  const GatherLayout l = gather_layout(c.in(0).dims, c.in(0).rank, p.axis, numel(c.in(1)));
  switch (dtype_size(static_cast<DType>(c.in(0).dtype))) {
    case 1: return launched(c, launch_gather<uint8_t>(c, l, error));
    case 2: return launched(c, launch_gather<uint16_t>(c, l, error));
    case 4: return launched(c, launch_gather<uint32_t>(c, l, error));
    case 8: return launched(c, launch_gather<uint64_t>(c, l, error));
    default: return c.error("no element size the kernel copies");
  }
}

Status rope(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t seq = x.dims[x.rank - 2], dim = x.dims[x.rank - 1];
  const RopePair pair{c.in_data<float>(0),
                      c.out_data<float>(0),
                      c.has_input(1) ? c.in_data<int64_t>(1) : nullptr,
                      seq,
                      dim,
                      std::log(p.theta),
                      p.interleaved,
                      p.inverse ? -1.0f : 1.0f};
  return launched(c, launch_map(numel(x) / 2, current_stream(), pair));
}

Status causal_mask(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const CausalMaskElement element{c.in_data<float>(0), c.out_data<float>(0), x.dims[x.rank - 2], x.dims[x.rank - 1],
                                  static_cast<float>(p.value)};
  return launched(c, launch_map(numel(x), current_stream(), element));
}

// Inference dropout is the identity.
Status dropout(const KernelCall& c) {
  if (c.out(0).data == c.in(0).data) return Status::ok();
  return launched(c, cudaMemcpyAsync(c.out(0).data, c.in(0).data, c.out(0).nbytes, cudaMemcpyDeviceToDevice,
                                     current_stream()));
}

Status dropout_train(const KernelCall& c, const params::SequenceParams& p) {
  const DropoutTrainElement element{c.in_data<float>(0),
                                    c.in_data<int64_t>(1),
                                    c.out_data<float>(0),
                                    c.out_data<uint8_t>(1),
                                    splitmix64_hd(p.seed),
                                    static_cast<uint64_t>(p.ratio * 16777216.0),
                                    1.0 / (1.0 - p.ratio)};
  return launched(c, launch_map(numel(c.in(0)), current_stream(), element));
}

// CachedAttention: a block per query row, its warps taking every kAttentionWarps-th visible key
// (online softmax each), merged through shared memory by warp 0, which writes the row.
// kPerLane value columns per lane: head dims up to 32 kPerLane (registers grow with it, so the
// launch picks the smallest that holds the head).
constexpr int kAttentionWarps = 4;
constexpr int64_t kAttentionMaxDim = 16 * kWarp;

template <int kAttentionPerLane>
__global__ void attention_kernel(const float* q, const float* key_cache, const float* value_cache,
                                 const int64_t* position, float* out, AttentionShape shape, float scale) {
  const int64_t p = *position;
  if (!shape.position_fits(p)) return;  // the whole block leaves together
  __shared__ float tops[kAttentionWarps], totals[kAttentionWarps];
  __shared__ float accs[kAttentionWarps][kAttentionPerLane * kWarp];
  const int warp = threadIdx.x / kWarp;
  const WarpTeam team{static_cast<int>(threadIdx.x % kWarp)};
  const int64_t rows = shape.batch * shape.heads * shape.seq;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const AttentionRows r = attention_rows(shape, key_cache, value_cache, p, row);
    AttentionShare<kAttentionPerLane> share;
    attend(team, q + row * shape.dim, r.keys, r.values, r.visible, warp, kAttentionWarps, shape.dim, scale, share);
    if (team.lane == 0) {
      tops[warp] = share.top;
      totals[warp] = share.total;
    }
    for (int k = 0; k < kAttentionPerLane; ++k) accs[warp][k * kWarp + team.lane] = share.acc[k];
    __syncthreads();
    if (warp == 0) {
      for (int w = 1; w < kAttentionWarps; ++w) {
        AttentionShare<kAttentionPerLane> other;
        other.top = tops[w];
        other.total = totals[w];
        for (int k = 0; k < kAttentionPerLane; ++k) other.acc[k] = accs[w][k * kWarp + team.lane];
        share.merge(other);
      }
      for (int k = 0; k < kAttentionPerLane; ++k) {
        const int64_t e = team.lane + static_cast<int64_t>(k) * kWarp;
        if (e < shape.dim) out[row * shape.dim + e] = share.acc[k] / share.total;
      }
    }
    __syncthreads();  // the slots are free again
  }
}

AttentionShape attention_shape(const pock_op_desc& op) {
  const pock_tensor_desc& q = op.inputs[0];
  const pock_tensor_desc& cache = op.inputs[3];
  return {q.dims[0], q.dims[1], cache.dims[1], q.dims[2], cache.dims[2], q.dims[3]};
}

bool attention_fits(const pock_op_desc& op) { return op.inputs[0].dims[3] <= kAttentionMaxDim; }

// ref's words for a position whose new rows do not fit the cache.
std::string attention_position_error(const pock_op_desc& op, const params::SequenceParams&) {
  const AttentionShape shape = attention_shape(op);
  return "the position + " + std::to_string(shape.seq) + " new rows do not fit the KV cache of " +
         std::to_string(shape.capacity);
}

Status cached_attention(const KernelCall& c, const params::SequenceParams& p, ErrorSite error) {
  const AttentionShape shape = attention_shape(*c.desc);
  const int64_t* position = c.in_data<int64_t>(5);
  const CacheWriteElement write{c.in_data<float>(1),    c.in_data<float>(2), c.inout_data<float>(3),
                                c.inout_data<float>(4), position,            shape,
                                error};
  POCK_RETURN_IF_ERROR(launched(c, launch_map(numel(c.in(1)), current_stream(), write)));
  const int64_t rows = shape.batch * shape.heads * shape.seq;
  if (rows == 0) return Status::ok();
  const unsigned blocks = static_cast<unsigned>(rows < 65535 ? rows : 65535);
  const float scale = static_cast<float>(p.scale);
  const float* q = c.in_data<float>(0);
  const float* keys = c.in_data<float>(3);
  const float* values = c.in_data<float>(4);
  float* out = c.out_data<float>(0);
  cudaStream_t stream = current_stream();
  const int threads = kAttentionWarps * kWarp;
  if (shape.dim <= 4 * kWarp) {
    attention_kernel<4><<<blocks, threads, 0, stream>>>(q, keys, values, position, out, shape, scale);
  } else if (shape.dim <= 8 * kWarp) {
    attention_kernel<8><<<blocks, threads, 0, stream>>>(q, keys, values, position, out, shape, scale);
  } else {
    attention_kernel<16><<<blocks, threads, 0, stream>>>(q, keys, values, position, out, shape, scale);
  }
  return launched(c, cudaGetLastError());
}

}  // namespace

void register_sequence(KernelTable& t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    t.add(checked_kernel<params::SequenceParams, gather_index_error, gather>("Gather", static_cast<DType>(i)));
  }
  t.add(typed_kernel<params::SequenceParams, rope>("Rope", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, causal_mask>("CausalMask", DType::kF32));
  t.add(checked_kernel<params::SequenceParams, attention_position_error, cached_attention>(
      "CachedAttention", DType::kF32, 1, attention_fits));
  t.add({"Dropout", DType::kF32, dropout});
  t.add(typed_kernel<params::SequenceParams, dropout_train>("DropoutTrain", DType::kF32));
}

}  // namespace pock::cuda
