// The cpu backend's pooling kernels, registered by conv/max_pool.cpp (MaxPool2d) and
// layer_grad_conv/pool_grad.cpp (MaxPool2dGrad, AvgPool2dGrad), kept together because forward and
// backward share their window traversal: one task per (image, channel)
// plane, so overlapping windows never race. The forward max reduces each output row's unclipped
// windows in two vectorized passes (over the window's rows, then its columns); only windows
// clipped by padding or ceil_mode take the scalar path; a NaN anywhere in a window wins, as in
// ref. The max gradient re-scans each window exactly as ref does (first maximum; NaN wins) and
// routes dy there, the unclipped windows of an output row scanned together in vector lanes;
// average pooling adds dy / divisor along each window row, a loop that vectorizes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

#include "kernels/cpu/pool_kernels.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/conv.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinElementsPerTask = size_t{1} << 12;

struct PoolWindow {
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  // The window of output (oy, ox) clipped to the input: rows [y0, y1), columns [x0, x1).
  int64_t top(int64_t oy) const { return oy * stride_h - pad_top; }
  int64_t left(int64_t ox) const { return ox * stride_w - pad_left; }
};

// x: the forward input [N, C, H, W]; dy: the forward output's gradient [N, C, OH, OW]; the window
// from the conv family's shared parameters (kernels/params/conv.hpp, validated by its parser).
bool pool_window(const params::WindowParams& p, const pock_tensor_desc& x, const pock_tensor_desc& dy, PoolWindow* w) {
  if (x.rank != 4 || dy.rank != 4 || !is_f32(x) || !is_f32(dy)) return false;
  if (x.dims[0] != dy.dims[0] || x.dims[1] != dy.dims[1]) return false;
  w->planes = x.dims[0] * x.dims[1];
  w->in_h = x.dims[2];
  w->in_w = x.dims[3];
  w->out_h = dy.dims[2];
  w->out_w = dy.dims[3];
  w->kernel_h = p.kernel_h;
  w->kernel_w = p.kernel_w;
  w->stride_h = p.stride_h;
  w->stride_w = p.stride_w;
  w->pad_top = p.pad_top;
  w->pad_left = p.pad_left;
  w->pad_bottom = p.pad_bottom;
  w->pad_right = p.pad_right;
  return true;
}

// At load, before prepare: the shared parser decides whether the attributes are usable at all.
bool pool_window(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& dy, PoolWindow* w) {
  params::WindowParams p;
  return params::parse(op, &p).is_ok() && pool_window(p, x, dy, w);
}

}  // namespace

bool max_pool_accepts(const pock_op_desc& op) {
  PoolWindow w;
  return op.num_inputs == 1 && op.num_outputs == 1 && pool_window(op, op.inputs[0], op.outputs[0], &w);
}


bool max_pool_grad_accepts(const pock_op_desc& op) {
  PoolWindow w;
  return op.num_inputs == 2 && op.num_outputs == 1 && is_f32(op.outputs[0]) &&
         pool_window(op, op.inputs[1], op.inputs[0], &w);
}


bool avg_pool_grad_accepts(const pock_op_desc& op) {
  PoolWindow w;
  return op.num_inputs == 1 && op.num_outputs == 1 && pool_window(op, op.outputs[0], op.inputs[0], &w);
}

namespace {

template <typename PlaneFn>
void for_planes(const KernelCall& c, const PoolWindow& w, const PlaneFn& plane_fn) {
  const size_t planes = static_cast<size_t>(w.planes);
  const size_t per_task =
      std::max<size_t>(1, kMinElementsPerTask / static_cast<size_t>(std::max<int64_t>(1, w.in_h * w.in_w)));
  pthreadpool_t pool = planes > per_task ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, planes, balanced_tile(pool, planes, per_task), [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) plane_fn(static_cast<int64_t>(p));
  });
}

// The ref order of comparisons: a NaN anywhere in the window wins, as in PyTorch.
inline float max_step(float best, float v) { return (v > best || v != v) ? v : best; }

// y[j] = max(y[j], x[j * stride]) for j < n.
POCK_SIMD_CLONES void max_strided(const float* x, int64_t stride, float* y, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = max_step(y[j], x[j * stride]);
}

// y[j] = max(y[j], x[j]) for j < n: contiguous, so it vectorizes whatever the pool's stride.
POCK_SIMD_CLONES void max_rows(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = max_step(y[j], x[j]);
}

// Max over the window of (oy, ox) clipped to the input; -inf when nothing is left (as ref).
float clipped_max(const PoolWindow& w, const float* xp, int64_t y0, int64_t y1, int64_t ox) {
  const int64_t x0 = std::max<int64_t>(w.left(ox), 0), x1 = std::min(w.left(ox) + w.kernel_w, w.in_w);
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t iy = y0; iy < y1; ++iy) {
    for (int64_t ix = x0; ix < x1; ++ix) best = max_step(best, xp[iy * w.in_w + ix]);
  }
  return best;
}

// Input columns one pass of the unclipped windows covers: a stack buffer, so a run allocates
// nothing. A kernel wider than this (never seen in CNNs) takes the scalar path.
constexpr int64_t kColumns = 512;

// row[j] for output columns [begin, end) whose windows lie inside the input's columns: first the
// max over the window's rows for each input column (contiguous), then over kernel_w columns of
// that (strided), in chunks of output columns whose input span fits the buffer.
void max_pool_inner(const PoolWindow& w, const float* xp, int64_t y0, int64_t y1, int64_t begin, int64_t end,
                    float* row) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  const int64_t per_chunk = (kColumns - w.kernel_w) / w.stride_w + 1;
  if (w.kernel_w > kColumns) {
    for (int64_t ox = begin; ox < end; ++ox) row[ox] = clipped_max(w, xp, y0, y1, ox);
    return;
  }
  float columns[kColumns];
  for (int64_t b = begin; b < end; b += per_chunk) {
    const int64_t m = std::min(per_chunk, end - b);
    const int64_t span = (m - 1) * w.stride_w + w.kernel_w;
    std::fill(columns, columns + span, kLowest);
    for (int64_t iy = y0; iy < y1; ++iy) max_rows(xp + iy * w.in_w + w.left(b), columns, span);
    std::fill(row + b, row + b + m, kLowest);
    for (int64_t kx = 0; kx < w.kernel_w; ++kx) max_strided(columns + kx, w.stride_w, row + b, m);
  }
}

}  // namespace

Status max_pool(const KernelCall& c, const params::WindowParams& p) {
  PoolWindow w;
  if (!pool_window(p, c.in(0), c.out(0), &w)) return c.error("bad shapes");
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  // Output columns whose window lies inside the input's columns: [inner_begin, inner_end).
  const int64_t inner_begin = std::min(w.out_w, (w.pad_left + w.stride_w - 1) / w.stride_w);
  const int64_t last_inner = w.in_w - w.kernel_w + w.pad_left;  // the largest inside left edge + pad
  const int64_t inner_end =
      last_inner < 0 ? inner_begin : std::max(inner_begin, std::min(w.out_w, last_inner / w.stride_w + 1));
  for_planes(c, w, [&](int64_t p) {
    const float* xp = x + p * w.in_h * w.in_w;
    float* yp = y + p * w.out_h * w.out_w;
    for (int64_t oy = 0; oy < w.out_h; ++oy) {
      const int64_t y0 = std::max<int64_t>(w.top(oy), 0), y1 = std::min(w.top(oy) + w.kernel_h, w.in_h);
      float* row = yp + oy * w.out_w;
      for (int64_t ox = 0; ox < inner_begin; ++ox) row[ox] = clipped_max(w, xp, y0, y1, ox);
      for (int64_t ox = inner_end; ox < w.out_w; ++ox) row[ox] = clipped_max(w, xp, y0, y1, ox);
      max_pool_inner(w, xp, y0, y1, inner_begin, inner_end, row);
    }
  });
  return Status::ok();
}

namespace {

// The ref scan of one window clipped to the input, rows [y0, y1) and columns [x0, x1): the first
// maximum in row-major order, or the last NaN (a NaN replaces anything, nothing replaces a NaN).
int64_t window_argmax(const PoolWindow& w, const float* xp, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  float best = -std::numeric_limits<float>::infinity();
  int64_t best_at = y0 * w.in_w + x0;
  for (int64_t iy = y0; iy < y1; ++iy) {
    for (int64_t ix = x0; ix < x1; ++ix) {
      const float v = xp[iy * w.in_w + ix];
      const bool take = (v > best) | (v != v);  // no branch: random data mispredicts half of them
      best = take ? v : best;
      best_at = take ? iy * w.in_w + ix : best_at;
    }
  }
  return best_at;
}

// The scan for m windows side by side whose columns lie inside the input (the first's left column
// is `left`, window j's is left + j * stride), vectorized across the windows: one step per window
// element, in the scalar scan's order, with the scalar scan's compare-and-select lane by lane, so
// that every window picks the same element as ref. Any stride and count; best and best_at live
// in memory between steps.
POCK_SIMD_CLONES void windows_argmax_any(const float* xp, int32_t in_w, int32_t y0, int32_t y1, int32_t kernel_w,
                                         int32_t stride, int32_t left, float* best, int32_t* best_at, int32_t m) {
  const int32_t first = y0 * in_w + left;
#pragma omp simd
  for (int32_t j = 0; j < m; ++j) {
    best[j] = -std::numeric_limits<float>::infinity();
    best_at[j] = first + j * stride;
  }
  for (int32_t iy = y0; iy < y1; ++iy) {
    for (int32_t kx = 0; kx < kernel_w; ++kx) {
      const int32_t at = iy * in_w + left + kx;
      const float* row = xp + at;
#pragma omp simd
      for (int32_t j = 0; j < m; ++j) {
        const float v = row[j * stride];
        const bool take = (v > best[j]) | (v != v);
        best[j] = take ? v : best[j];
        best_at[j] = take ? at + j * stride : best_at[j];
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define POCK_POOL_AVX512 1
// The same scan with AVX-512 for strides 1 and 2 (ResNet's 3x3 / 2 stem pooling): 16 windows per
// pass with their best value and index in registers through all of a window's elements; the
// memory round trip per step of windows_argmax_any was most of its time. (GCC's vector
// extensions scalarized these compares, hence intrinsics, as in layout.cpp.) Stride 2 reads two
// vectors and keeps the even lanes. m is a multiple of 16, and every window's reads (one element
// more for stride 2) lie inside x: the caller pads the count only where the extra windows' do.
__attribute__((target("avx512f"))) void windows_argmax_avx512(const float* xp, int32_t in_w, int32_t y0, int32_t y1,
                                                             int32_t kernel_w, int32_t stride, int32_t left,
                                                             int32_t* best_at, int32_t m) {
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i even = _mm512_slli_epi32(lane, 1);
  const __m512i offset = stride == 2 ? even : lane;
  for (int32_t j0 = 0; j0 < m; j0 += 16) {
    __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512i at = _mm512_add_epi32(_mm512_set1_epi32(y0 * in_w + left + j0 * stride), offset);
    for (int32_t iy = y0; iy < y1; ++iy) {
      for (int32_t kx = 0; kx < kernel_w; ++kx) {
        const int32_t a = iy * in_w + left + kx + j0 * stride;
        const __m512 v = stride == 2
                             ? _mm512_permutex2var_ps(_mm512_loadu_ps(xp + a), even, _mm512_loadu_ps(xp + a + 16))
                             : _mm512_loadu_ps(xp + a);
        // v > best (false against a NaN best), or v is NaN: the scalar scan's rule.
        const __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        best = _mm512_mask_mov_ps(best, take, v);
        at = _mm512_mask_mov_epi32(at, take, _mm512_add_epi32(_mm512_set1_epi32(a), offset));
      }
    }
    _mm512_storeu_si512(best_at + j0, at);
  }
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
#endif

// Windows a pass of windows_argmax_avx512 takes.
constexpr int64_t kLanes = 16;

// Windows of one output row vectorized at a time: stack buffers, so that a run allocates nothing.
constexpr int64_t kWindows = 256;  // a multiple of kLanes

// dx = 0, then each window's dy added at its maximum, window by window in ref's order (output
// rows, then columns), so that overlapping windows sum in the same order as ref: bit-identical.
// Windows clipped by padding or ceil_mode take the scalar scan; the rest are found together
// (windows_argmax_avx512, else windows_argmax_any), and only the scatter of their dy stays scalar.
}  // namespace

Status max_pool_grad(const KernelCall& c, const params::WindowParams& p) {
  PoolWindow w;
  if (!pool_window(p, c.in(1), c.in(0), &w)) return c.error("bad shapes");
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  const int64_t plane_size = w.in_h * w.in_w;
  // Output columns whose window lies inside the input's columns: [inner_begin, inner_end), as in
  // the forward; none when plane indices would not fit the int32 lanes.
  int64_t inner_begin = std::min(w.out_w, (w.pad_left + w.stride_w - 1) / w.stride_w);
  const int64_t last_inner = w.in_w - w.kernel_w + w.pad_left;
  int64_t inner_end =
      last_inner < 0 ? inner_begin : std::max(inner_begin, std::min(w.out_w, last_inner / w.stride_w + 1));
#ifdef POCK_POOL_AVX512
  static const bool avx512 = has_avx512();
#endif
  if (plane_size + w.kernel_w + w.stride_w * kWindows > std::numeric_limits<int32_t>::max()) {
    inner_begin = inner_end = w.out_w;
  }
  for_planes(c, w, [&](int64_t p) {
    const float* xp = x + p * plane_size;
    const float* dyp = dy + p * w.out_h * w.out_w;
    float* dxp = dx + p * plane_size;
    std::memset(dxp, 0, static_cast<size_t>(plane_size) * sizeof(float));
    float best[kWindows];
    int32_t best_at[kWindows];
    auto scalar_window = [&](int64_t y0, int64_t y1, int64_t oy, int64_t ox) {
      const int64_t x0 = std::max<int64_t>(w.left(ox), 0), x1 = std::min(w.left(ox) + w.kernel_w, w.in_w);
      if (y0 >= y1 || x0 >= x1) return;
      dxp[window_argmax(w, xp, y0, y1, x0, x1)] += dyp[oy * w.out_w + ox];
    };
    for (int64_t oy = 0; oy < w.out_h; ++oy) {
      const int64_t y0 = std::max<int64_t>(w.top(oy), 0), y1 = std::min(w.top(oy) + w.kernel_h, w.in_h);
      for (int64_t ox = 0; ox < inner_begin; ++ox) scalar_window(y0, y1, oy, ox);
      if (y0 < y1) {
        for (int64_t b = inner_begin; b < inner_end; b += kWindows) {
          const int64_t m = std::min(kWindows, inner_end - b);
          // Whole blocks of lanes when the extra windows' reads stay inside x (they run into the
          // next row or plane): their results are never used.
          [[maybe_unused]] const int64_t padded = (m + kLanes - 1) / kLanes * kLanes;
          [[maybe_unused]] const bool fits =
              (y1 - 1) * w.in_w + w.left(b) + padded * w.stride_w + w.kernel_w <= (w.planes - p) * plane_size;
          const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
#ifdef POCK_POOL_AVX512
          if (avx512 && fits && w.stride_w <= 2) {
            windows_argmax_avx512(xp, i32(w.in_w), i32(y0), i32(y1), i32(w.kernel_w), i32(w.stride_w),
                                  i32(w.left(b)), best_at, i32(padded));
          } else
#endif
          {
            windows_argmax_any(xp, i32(w.in_w), i32(y0), i32(y1), i32(w.kernel_w), i32(w.stride_w), i32(w.left(b)),
                               best, best_at, i32(m));
          }
          const float* g = dyp + oy * w.out_w + b;
          for (int64_t j = 0; j < m; ++j) dxp[best_at[j]] += g[j];
        }
      }
      for (int64_t ox = std::max(inner_begin, inner_end); ox < w.out_w; ++ox) scalar_window(y0, y1, oy, ox);
    }
  });
  return Status::ok();
}

namespace {

POCK_SIMD_CLONES void add_constant(float v, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += v;
}

}  // namespace

Status avg_pool_grad(const KernelCall& c, const params::WindowParams& p) {
  PoolWindow w;
  if (!pool_window(p, c.out(0), c.in(0), &w)) return c.error("bad shapes");
  const bool count_include_pad = p.count_include_pad;
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  const int64_t plane_size = w.in_h * w.in_w;
  for_planes(c, w, [&](int64_t p) {
    const float* dyp = dy + p * w.out_h * w.out_w;
    float* dxp = dx + p * plane_size;
    std::memset(dxp, 0, static_cast<size_t>(plane_size) * sizeof(float));
    for (int64_t oy = 0; oy < w.out_h; ++oy) {
      const int64_t top = w.top(oy);
      const int64_t y0 = std::max<int64_t>(top, 0), y1 = std::min(top + w.kernel_h, w.in_h);
      for (int64_t ox = 0; ox < w.out_w; ++ox) {
        const int64_t left = w.left(ox);
        const int64_t x0 = std::max<int64_t>(left, 0), x1 = std::min(left + w.kernel_w, w.in_w);
        if (y0 >= y1 || x0 >= x1) continue;
        // The forward divisor: the real elements, or with count_include_pad the window clipped
        // to the padded input (not to what ceil_mode adds).
        const int64_t divisor = count_include_pad ? (std::min(top + w.kernel_h, w.in_h + w.pad_bottom) - top) *
                                                        (std::min(left + w.kernel_w, w.in_w + w.pad_right) - left)
                                                  : (y1 - y0) * (x1 - x0);
        const float share = dyp[oy * w.out_w + ox] / static_cast<float>(divisor);
        for (int64_t iy = y0; iy < y1; ++iy) add_constant(share, dxp + iy * w.in_w + x0, x1 - x0);
      }
    }
  });
  return Status::ok();
}


}  // namespace pock::cpu
