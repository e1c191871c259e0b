// MaxPool2d, MaxPool2dGrad and AvgPool2dGrad on the cpu backend: one task per (image, channel)
// plane, so overlapping windows never race. The forward max reduces each output row's unclipped
// windows in two vectorized passes (over the window's rows, then its columns); only windows
// clipped by padding or ceil_mode take the scalar path; a NaN anywhere in a window wins, as in
// ref. The max gradient re-scans each window exactly as ref does (first maximum; NaN wins) and
// routes dy there; average pooling adds dy / divisor along each window row, a loop that vectorizes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

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

int64_t list_value(const KernelCall& c, const char* name, int64_t i, int64_t fallback) {
  const IntSpan list = c.attr_ints(name);
  return i < list.size ? list[i] : fallback;
}

// x: the forward input [N, C, H, W]; dy: the forward output's gradient [N, C, OH, OW].
bool pool_window(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& dy, PoolWindow* w) {
  if (x.rank != 4 || dy.rank != 4 || !is_f32(x) || !is_f32(dy)) return false;
  if (x.dims[0] != dy.dims[0] || x.dims[1] != dy.dims[1]) return false;
  const KernelCall c = call_of(op);
  w->planes = x.dims[0] * x.dims[1];
  w->in_h = x.dims[2];
  w->in_w = x.dims[3];
  w->out_h = dy.dims[2];
  w->out_w = dy.dims[3];
  w->kernel_h = list_value(c, "kernel", 0, 1);
  w->kernel_w = list_value(c, "kernel", 1, 1);
  w->stride_h = list_value(c, "strides", 0, w->kernel_h);
  w->stride_w = list_value(c, "strides", 1, w->kernel_w);
  w->pad_top = list_value(c, "pads", 0, 0);
  w->pad_left = list_value(c, "pads", 1, 0);
  w->pad_bottom = list_value(c, "pads", 2, 0);
  w->pad_right = list_value(c, "pads", 3, 0);
  return w->kernel_h >= 1 && w->kernel_w >= 1 && w->stride_h >= 1 && w->stride_w >= 1 && w->pad_top >= 0 &&
         w->pad_left >= 0 && w->pad_bottom >= 0 && w->pad_right >= 0;
}

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

Status max_pool(const KernelCall& c) {
  PoolWindow w;
  if (!pool_window(*c.desc, c.in(0), c.out(0), &w)) return c.error("bad shapes");
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

Status max_pool_grad(const KernelCall& c) {
  PoolWindow w;
  if (!pool_window(*c.desc, c.in(1), c.in(0), &w)) return c.error("bad shapes");
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  const int64_t plane_size = w.in_h * w.in_w;
  for_planes(c, w, [&](int64_t p) {
    const float* xp = x + p * plane_size;
    const float* dyp = dy + p * w.out_h * w.out_w;
    float* dxp = dx + p * plane_size;
    std::memset(dxp, 0, static_cast<size_t>(plane_size) * sizeof(float));
    for (int64_t oy = 0; oy < w.out_h; ++oy) {
      const int64_t y0 = std::max<int64_t>(w.top(oy), 0), y1 = std::min(w.top(oy) + w.kernel_h, w.in_h);
      for (int64_t ox = 0; ox < w.out_w; ++ox) {
        const int64_t x0 = std::max<int64_t>(w.left(ox), 0), x1 = std::min(w.left(ox) + w.kernel_w, w.in_w);
        if (y0 >= y1 || x0 >= x1) continue;
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_at = y0 * w.in_w + x0;
        for (int64_t iy = y0; iy < y1; ++iy) {
          for (int64_t ix = x0; ix < x1; ++ix) {
            const float v = xp[iy * w.in_w + ix];
            if (v > best || std::isnan(v)) {
              best = v;
              best_at = iy * w.in_w + ix;
            }
          }
        }
        dxp[best_at] += dyp[oy * w.out_w + ox];
      }
    }
  });
  return Status::ok();
}

POCK_SIMD_CLONES void add_constant(float v, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += v;
}

Status avg_pool_grad(const KernelCall& c) {
  PoolWindow w;
  if (!pool_window(*c.desc, c.out(0), c.in(0), &w)) return c.error("bad shapes");
  const bool count_include_pad = c.attr_int("count_include_pad", 0) != 0;
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

KernelDef def(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_pool_grad(KernelTable& t) {
  t.add(def("MaxPool2d", max_pool, max_pool_accepts));
  t.add(def("MaxPool2dGrad", max_pool_grad, max_pool_grad_accepts));
  t.add(def("AvgPool2dGrad", avg_pool_grad, avg_pool_grad_accepts));
}

}  // namespace pock::cpu
