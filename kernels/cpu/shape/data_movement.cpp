// Transpose, Expand and Slice on the cpu backend. Transposes between NCHW and NHWC (the edges of
// the channels-last regions of compiler/passes/layout_nhwc.cpp) use the conv staging copies of
// layout.hpp; the rest serve the attention head splits and merges, GQA's repeated K/V heads and
// RoPE's half rotations of transformer blocks, which on ref cost 8-13 % of a BERT or LLaMA step
// (benchmarks/RESULTS.md). All three are a strided walk (strided_walk.hpp) over the output whose
// innermost run is a memcpy (contiguous source), a fill (broadcast source) or, for a transpose that
// moves the input's innermost dim, a tiled 2D transpose.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/strided_walk.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/shape.hpp"

namespace pock::cpu {
namespace {

// Below this many elements a copy is not worth handing to the pool.
constexpr size_t kMinParallelElements = size_t{1} << 15;
// Square tiles keep a transpose's reads and writes within a few cache lines each.
constexpr int64_t kTile = 16;

void row_major_strides(const pock_tensor_desc& t, int64_t* strides) {
  int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= t.dims[d];
  }
}

pthreadpool_t pool_for(const KernelCall& c, int64_t elements) {
  return static_cast<size_t>(elements) >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
}

// Writes n contiguous f32 values as output elements: f32, or bf16 rounded as the cpu Cast rounds
// (a Transpose that writes the bf16 copy of a GEMM operand as it moves it, output_dtype "bf16",
// src/compiler/lowering/bf16_producers.hpp).
void store_run(const float* values, int64_t n, float* out) {
  std::memcpy(out, values, static_cast<size_t>(n) * sizeof(float));
}
void store_run(const float* values, int64_t n, uint16_t* out) { convert_to_bf16(values, n, out); }

// Copies the walk's rows from `src` (operand 0) to `dst`; the innermost source stride is 1
// (memcpy), 0 (fill) or anything else (gather).
template <typename Out>
void copy_rows(const StridedWalk& w, const float* src, Out* dst, pthreadpool_t pool) {
  const int64_t inner = w.inner(), step = w.inner_stride(0);
  const size_t rows = static_cast<size_t>(w.rows());
  const size_t tile = balanced_tile(pool, rows, (kMinParallelElements / 4 + inner - 1) / std::max<int64_t>(inner, 1));
  parallel_for(pool, rows, tile, [&](size_t begin, size_t end) {
    for_each_row(w, static_cast<int64_t>(begin), static_cast<int64_t>(end), [&](int64_t out, const int64_t* in) {
      const float* s = src + in[0];
      Out* d = dst + out;
      if (step == 1) {
        store_run(s, inner, d);
      } else if constexpr (!std::is_same_v<Out, float>) {
        for (int64_t i = 0; i < inner; ++i) store_run(s + i * step, 1, d + i);
      } else if (step == 0) {
        std::fill(d, d + inner, *s);
      } else {
        for (int64_t i = 0; i < inner; ++i) d[i] = s[i * step];
      }
    });
  });
}

// ---- Transpose ------------------------------------------------------------------------------

enum class LayoutPerm { kNone, kToNhwc, kToNchw };

LayoutPerm layout_perm(const IntSpan& perm) {
  if (perm.size != 4 || perm[0] != 0) return LayoutPerm::kNone;
  if (perm[1] == 2 && perm[2] == 3 && perm[3] == 1) return LayoutPerm::kToNhwc;
  if (perm[1] == 3 && perm[2] == 1 && perm[3] == 2) return LayoutPerm::kToNchw;
  return LayoutPerm::kNone;
}

// f32 in; f32 out, or bf16 (output_dtype "bf16").
bool transpose_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  return is_f32(x) && (is_f32(y) || y.dtype == POCK_BF16) && x.rank == y.rank && x.rank <= kWalkMaxRank;
}

// The walk's innermost dim reads the source with a stride: some other dim `k` reads it
// contiguously. Each (other dims, k tile) task transposes a [K x L] block through 16x16 tiles.
template <typename Out>
void transpose_blocks(const StridedWalk& w, int k, const float* src, Out* dst, pthreadpool_t pool) {
  const int last = w.rank - 1;
  int64_t out_stride[kWalkMaxRank];
  for (int64_t s = 1, d = last; d >= 0; --d) {
    out_stride[d] = s;
    s *= w.dims[d];
  }
  const int64_t K = w.dims[k], L = w.dims[last], src_l = w.strides[0][last], dst_k = out_stride[k];
  const int64_t k_tiles = (K + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int d = 0; d < last; ++d) outer *= d == k ? 1 : w.dims[d];
  const size_t tasks = static_cast<size_t>(outer * k_tiles);
  parallel_for(pool, tasks, balanced_tile(pool, tasks, 1), [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      int64_t rest = static_cast<int64_t>(t) / k_tiles;
      const int64_t i0 = static_cast<int64_t>(t) % k_tiles * kTile, i1 = std::min(K, i0 + kTile);
      int64_t s_base = w.base[0], d_base = 0;
      for (int d = last - 1; d >= 0; --d) {
        if (d == k) continue;
        const int64_t i = rest % w.dims[d];
        rest /= w.dims[d];
        s_base += i * w.strides[0][d];
        d_base += i * out_stride[d];
      }
      for (int64_t j0 = 0; j0 < L; j0 += kTile) {
        const int64_t j1 = std::min(L, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          const float* s = src + s_base + i;
          Out* d = dst + d_base + i * dst_k;
          if constexpr (std::is_same_v<Out, float>) {
            for (int64_t j = j0; j < j1; ++j) d[j] = s[j * src_l];
          } else {
            float row[kTile];
            for (int64_t j = j0; j < j1; ++j) row[j - j0] = s[j * src_l];
            store_run(row, j1 - j0, d + j0);
          }
        }
      }
    }
  });
}

template <typename Out>
void transpose_walk(const StridedWalk& w, const float* src, Out* dst, pthreadpool_t pool) {
  if (w.inner_stride(0) != 1) {
    for (int k = 0; k + 1 < w.rank; ++k) {
      if (w.strides[0][k] == 1) {
        transpose_blocks(w, k, src, dst, pool);
        return;
      }
    }
  }
  copy_rows(w, src, dst, pool);
}

Status transpose_run(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc &x = c.in(0), &y = c.out(0);
  const IntSpan perm = span_of(p.perm);
  switch (y.dtype == POCK_F32 ? layout_perm(perm) : LayoutPerm::kNone) {
    case LayoutPerm::kToNhwc:
      nchw_to_nhwc(c.in_data<float>(0), c.out_data<float>(0), x.dims[0], x.dims[1], x.dims[2] * x.dims[3],
                   pool_for(c, numel(y)));
      return Status::ok();
    case LayoutPerm::kToNchw:
      nhwc_to_nchw(c.in_data<float>(0), nullptr, c.out_data<float>(0), x.dims[0], x.dims[3], x.dims[1] * x.dims[2],
                   pool_for(c, numel(y)));
      return Status::ok();
    case LayoutPerm::kNone:
      break;
  }
  int64_t in_strides[kWalkMaxRank], strides[1][kWalkMaxRank];
  row_major_strides(x, in_strides);
  for (int d = 0; d < y.rank; ++d) strides[0][d] = in_strides[perm.empty() ? x.rank - 1 - d : perm[d]];
  StridedWalk w;
  make_strided_walk(y.rank, y.dims, 1, strides, nullptr, &w);
  pthreadpool_t pool = pool_for(c, numel(y));
  if (y.dtype == POCK_BF16) transpose_walk(w, c.in_data<float>(0), c.out_data<uint16_t>(0), pool);
  else transpose_walk(w, c.in_data<float>(0), c.out_data<float>(0), pool);
  return Status::ok();
}

// ---- Expand ---------------------------------------------------------------------------------

bool expand_accepts(const pock_op_desc& op) {
  if (op.num_inputs < 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  return is_f32(x) && is_f32(y) && y.rank <= kWalkMaxRank && x.rank <= y.rank;
}

Status expand_run(const KernelCall& c) {
  const pock_tensor_desc &x = c.in(0), &y = c.out(0);
  int64_t strides[1][kWalkMaxRank];
  broadcast_strides(x, y, strides[0]);
  StridedWalk w;
  make_strided_walk(y.rank, y.dims, 1, strides, nullptr, &w);
  copy_rows(w, c.in_data<float>(0), c.out_data<float>(0), pool_for(c, numel(y)));
  return Status::ok();
}

// ---- Slice ----------------------------------------------------------------------------------

bool slice_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  return is_f32(x) && is_f32(y) && x.rank == y.rank && x.rank <= kWalkMaxRank;
}

// ONNX Slice's first index on an axis, as the ref kernel and the schema compute it.
int64_t slice_first(int64_t dim, int64_t start, int64_t step) {
  const int64_t limit = int64_t{1} << 62;
  start = std::clamp(start, -limit, limit);
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
}

Status slice_run(const KernelCall& c, const params::ShapeParams& p) {
  const pock_tensor_desc &x = c.in(0), &y = c.out(0);
  if (numel(y) == 0) return Status::ok();
  int64_t in_strides[kWalkMaxRank], strides[1][kWalkMaxRank];
  row_major_strides(x, in_strides);
  std::copy(in_strides, in_strides + x.rank, strides[0]);
  const IntSpan starts = span_of(p.starts), axes = span_of(p.axes), steps = span_of(p.steps);
  int64_t base = 0;
  for (int64_t i = 0; i < starts.size; ++i) {
    const int64_t a = axes.empty() ? i : axes[i];
    const int d = static_cast<int>(a < 0 ? a + x.rank : a);
    const int64_t step = steps.empty() ? 1 : steps[i];
    base += slice_first(x.dims[d], starts[i], step) * in_strides[d];
    strides[0][d] = step * in_strides[d];
  }
  StridedWalk w;
  make_strided_walk(y.rank, y.dims, 1, strides, &base, &w);
  copy_rows(w, c.in_data<float>(0), c.out_data<float>(0), pool_for(c, numel(y)));
  return Status::ok();
}

}  // namespace

void register_data_movement(KernelTable& t) {
  t.add(typed_kernel<params::ShapeParams, transpose_run>("Transpose", DType::kF32, kCpuScore, transpose_accepts));
  t.add(f32_kernel("Expand", expand_run, expand_accepts));
  t.add(typed_kernel<params::ShapeParams, slice_run>("Slice", DType::kF32, kCpuScore, slice_accepts));
}

}  // namespace pock::cpu
