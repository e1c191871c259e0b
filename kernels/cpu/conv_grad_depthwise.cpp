// Depthwise Conv2d gradients (one input channel per group, any depth multiplier) directly on
// NCHW, the adjoints of conv_depthwise.cpp's loops, one plane per call (DepthwiseGradLoops).
//
// Polyphase form: with strides (sh, sw), tap (ky, kx) sends output pixel (oy, ox) to input pixel
// (oy * sh + ky * dh - pt, ox * sw + kx * dw - pl). Split the input plane by the residues of its
// coordinates (phase (ry, rx): rows ry, ry + sh, ...; columns rx, rx + sw, ...): each tap feeds one
// phase, and inside it consecutive output pixels land on consecutive phase entries. So each phase
// is a plain stride-1 correlation of zero-margined planes, and laid out with one row pitch P, a 2-D
// shift is a 1-D offset: the whole plane is one flat loop, W lanes at a time, whatever the row
// width. That matters most for MobileNet's late layers (4x4 and 8x8 planes), where a loop per row
// (the old traversal) spent more on calls and remainders than on arithmetic.
//   dx: dy copied once per plane with zero margins; each dx phase entry is the sum over its taps
//       of w * (dy shifted), in registers; the phase rows are then written into dx. The columns
//       past a row's end (up to P) are computed and thrown away.
//   dw: x split into zero-margined phase planes once per plane, dy copied with pitch P (zeros past
//       each row); each tap's gradient is one flat dot product of dy with its shifted phase.
// W is the vector width of the running CPU (x86: AVX-512, AVX2, SSE2, chosen once, as in
// layout.cpp); GCC's vector extensions keep the code free of intrinsics. The scratch is a stack
// array (kMaxScratch); planes too big for it, kernels wider than kMaxKernel or more than kMaxTaps
// taps take the row-at-a-time traversal of conv_grad_kernel.hpp.
#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/depthwise_vector_rows.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr int64_t kMaxScratch = 20 * 1024;  // floats of stack scratch per plane (80 KB): 128 x 128 planes
constexpr int64_t kMaxKernel = 16;          // kernel rows and columns whose phases live on the stack
constexpr int64_t kMaxTaps = 256;           // taps x depth multiplier of one dx phase
constexpr int64_t kChunk = 1024;            // dx entries computed per pass over the taps

// ---- the row-at-a-time fallback --------------------------------------------------------------

// y[i * stride] += w * x[i] for i in [0, n).
POCK_SIMD_CLONES void scatter_scaled(float w, const float* x, float* y, int64_t stride, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i * stride] += w * x[i];
}

// sum x[i * stride] * y[i] for i in [0, n).
POCK_SIMD_CLONES float strided_dot(const float* x, int64_t stride, const float* y, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i * stride] * y[i];
  return sum;
}

// ---- the polyphase loops ---------------------------------------------------------------------

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Tap k along one axis: output index o reaches input index (o + q) * stride + r, i.e. entry
// o + q of phase r.
struct AxisPhase {
  int64_t r, q;  // no initializers: zeroing the stack arrays each call cost more than a 4x4 plane
};

void axis_phases(int64_t taps, int64_t dilation, int64_t pad, int64_t stride, AxisPhase* phases) {
  for (int64_t k = 0; k < taps; ++k) {
    const int64_t shift = k * dilation - pad;
    phases[k].q = floor_div(shift, stride);
    phases[k].r = shift - phases[k].q * stride;
  }
}

// Entries of phase r of an axis of `extent` (0 or less: none).
int64_t phase_length(int64_t extent, int64_t r, int64_t stride) { return (extent - r + stride - 1) / stride; }

int64_t max_q(const AxisPhase* p, int64_t n) {
  int64_t m = std::numeric_limits<int64_t>::min();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, p[i].q);
  return m;
}
int64_t min_q(const AxisPhase* p, int64_t n) {
  int64_t m = std::numeric_limits<int64_t>::max();
  for (int64_t i = 0; i < n; ++i) m = std::min(m, p[i].q);
  return m;
}

bool small_kernel(const ConvGeometry& g) {
  return g.kernel_h <= kMaxKernel && g.kernel_w <= kMaxKernel &&
         g.kernel_h * g.kernel_w * g.out_per_group() <= kMaxTaps;
}

// W floats in one vector register. (A typedef in a struct: GCC drops vector_size from an alias
// template, which would leave a plain float.)
template <int W>
struct VecOf {
  typedef float type __attribute__((vector_size(4 * W)));
};
template <int W>
using Vec = typename VecOf<W>::type;

// Vectors returned by value from functions that are always inlined into a function of their ISA:
// GCC's warning that such a return would change the ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

template <int W>
POCK_SIMD_INLINE Vec<W> load(const float* p) {
  Vec<W> v;
  std::memcpy(&v, p, sizeof v);  // an unaligned load
  return v;
}

// One tap of a dx phase: the entry at flat index f gains w * src[f + offset].
struct Tap {
  float w;
  int64_t offset;
};

// out[f] = sum over the taps of w * src[f + offset], for f in [0, n) rounded up to W. Four
// accumulators, so that the taps' FMAs do not wait on each other.
template <int W>
POCK_SIMD_INLINE void correlate(const Tap* taps, int64_t count, const float* src, float* out, int64_t n) {
  for (int64_t f = 0; f < n; f += W) {
    Vec<W> a0 = {}, a1 = {}, a2 = {}, a3 = {};
    int64_t t = 0;
    for (; t + 4 <= count; t += 4) {
      a0 += taps[t].w * load<W>(src + taps[t].offset + f);
      a1 += taps[t + 1].w * load<W>(src + taps[t + 1].offset + f);
      a2 += taps[t + 2].w * load<W>(src + taps[t + 2].offset + f);
      a3 += taps[t + 3].w * load<W>(src + taps[t + 3].offset + f);
    }
    for (; t < count; ++t) a0 += taps[t].w * load<W>(src + taps[t].offset + f);
    const Vec<W> sum = (a0 + a1) + (a2 + a3);
    std::memcpy(out + f, &sum, sizeof sum);
  }
}

// The sum of a[f] * b[f] for f in [0, n) rounded up to W.
template <int W>
POCK_SIMD_INLINE float flat_dot(const float* a, const float* b, int64_t n) {
  Vec<W> s0 = {}, s1 = {};
  int64_t f = 0;
  for (; f + 2 * W <= n; f += 2 * W) {
    s0 += load<W>(a + f) * load<W>(b + f);
    s1 += load<W>(a + f + W) * load<W>(b + f + W);
  }
  for (; f < n; f += W) s0 += load<W>(a + f) * load<W>(b + f);
  const Vec<W> s = s0 + s1;
  float sum = 0.0f;
  for (int i = 0; i < W; ++i) sum += s[i];
  return sum;
}

// row[ix] = phases[(ix % s) * pitch + ix / s] for ix < n: column phases back in column order.
POCK_SIMD_INLINE void interleave(const float* phases, int64_t pitch, int64_t s, float* row, int64_t n) {
  if (s == 1) {
    std::memcpy(row, phases, static_cast<size_t>(n) * sizeof(float));
  } else if (s == 2) {
    const float* even = phases;
    const float* odd = phases + pitch;
    const int64_t pairs = n / 2;
#pragma omp simd
    for (int64_t j = 0; j < pairs; ++j) {
      row[2 * j] = even[j];
      row[2 * j + 1] = odd[j];
    }
    if (n % 2) row[n - 1] = even[pairs];
  } else {
    for (int64_t ix = 0; ix < n; ++ix) row[ix] = phases[(ix % s) * pitch + ix / s];
  }
}

// The inverse: phases[(ix % s) * pitch + ix / s] = row[ix] for ix < n.
POCK_SIMD_INLINE void deinterleave(const float* row, int64_t n, int64_t s, float* phases, int64_t pitch) {
  if (s == 1) {
    std::memcpy(phases, row, static_cast<size_t>(n) * sizeof(float));
  } else if (s == 2) {
    float* even = phases;
    float* odd = phases + pitch;
    const int64_t pairs = n / 2;
#pragma omp simd
    for (int64_t j = 0; j < pairs; ++j) {
      even[j] = row[2 * j];
      odd[j] = row[2 * j + 1];
    }
    if (n % 2) even[pairs] = row[n - 1];
  } else {
    for (int64_t ix = 0; ix < n; ++ix) phases[(ix % s) * pitch + ix / s] = row[ix];
  }
}

// DepthwiseGradLoops::input_plane at vector width W.
template <int W>
POCK_SIMD_INLINE void input_plane_at(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  if (!small_kernel(g)) return depthwise_input_plane_by_rows(g, dy, w, dx, scatter_scaled);
  AxisPhase py[kMaxKernel], px[kMaxKernel];
  axis_phases(g.kernel_h, g.dilation_h, g.pad_top, g.stride_h, py);
  axis_phases(g.kernel_w, g.dilation_w, g.pad_left, g.stride_w, px);
  // Margins of the dy copy: every phase entry j reads dy index j - q, inside [-margin, out + margin).
  const int64_t top = std::max<int64_t>(0, max_q(py, g.kernel_h));
  const int64_t bottom = std::max<int64_t>(0, phase_length(g.in_h, 0, g.stride_h) - min_q(py, g.kernel_h) - g.out_h);
  const int64_t left = std::max<int64_t>(0, max_q(px, g.kernel_w));
  const int64_t right = std::max<int64_t>(0, phase_length(g.in_w, 0, g.stride_w) - min_q(px, g.kernel_w) - g.out_w);
  const int64_t pitch = left + g.out_w + right, plane = (top + g.out_h + bottom) * pitch;
  const int64_t multiplier = g.out_per_group();
  // The copy, then slack for the flat loop's overrun (a row and a vector), then the output rows.
  const int64_t copy_size = multiplier * plane + pitch + W;
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunk / pitch);
  const int64_t out_size = rows_per_chunk * pitch + W;  // per column phase
  if (copy_size + g.stride_w * out_size > kMaxScratch) {
    return depthwise_input_plane_by_rows(g, dy, w, dx, scatter_scaled);
  }
  float scratch[kMaxScratch];
  float* padded = scratch;
  float* out = scratch + copy_size;
  std::fill(padded, padded + copy_size, 0.0f);
  for (int64_t m = 0; m < multiplier; ++m) {
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      std::memcpy(padded + m * plane + (top + oy) * pitch + left, dy + m * g.out_plane() + oy * g.out_w,
                  static_cast<size_t>(g.out_w) * sizeof(float));
    }
  }
  Tap taps[kMaxTaps];
  const int64_t kernel_taps = g.kernel_h * g.kernel_w;
  for (int64_t ry = 0; ry < g.stride_h; ++ry) {
    const int64_t rows = phase_length(g.in_h, ry, g.stride_h);
    for (int64_t jy0 = 0; jy0 < rows; jy0 += rows_per_chunk) {
      const int64_t chunk_rows = std::min(rows_per_chunk, rows - jy0);
      // The row phases' entries for these rows, one buffer per column phase...
      for (int64_t rx = 0; rx < g.stride_w; ++rx) {
        float* o = out + rx * out_size;
        int64_t count = 0;
        for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
          if (py[ky].r != ry) continue;
          for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
            if (px[kx].r != rx) continue;
            for (int64_t m = 0; m < multiplier; ++m) {
              taps[count++] = {w[m * kernel_taps + ky * g.kernel_w + kx],
                               m * plane + (top - py[ky].q) * pitch + (left - px[kx].q)};
            }
          }
        }
        if (count == 0) {
          std::fill(o, o + chunk_rows * pitch, 0.0f);
        } else {
          correlate<W>(taps, count, padded + jy0 * pitch, o, chunk_rows * pitch);
        }
      }
      // ...then put back in column order, row by row.
      for (int64_t j = 0; j < chunk_rows; ++j) {
        interleave(out + j * pitch, out_size, g.stride_w, dx + ((jy0 + j) * g.stride_h + ry) * g.in_w, g.in_w);
      }
    }
  }
}

// DepthwiseGradLoops::weight_plane at vector width W.
template <int W>
POCK_SIMD_INLINE void weight_plane_at(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  if (!small_kernel(g)) return depthwise_weight_plane_by_rows(g, x, dy, sums, strided_dot);
  AxisPhase py[kMaxKernel], px[kMaxKernel];
  axis_phases(g.kernel_h, g.dilation_h, g.pad_top, g.stride_h, py);
  axis_phases(g.kernel_w, g.dilation_w, g.pad_left, g.stride_w, px);
  // Margins of the x phases: output index o reads phase entry o + q, inside [-margin, length + margin).
  const int64_t rows = phase_length(g.in_h, 0, g.stride_h), cols = phase_length(g.in_w, 0, g.stride_w);
  const int64_t top = std::max<int64_t>(0, -min_q(py, g.kernel_h));
  const int64_t bottom = std::max<int64_t>(0, g.out_h + max_q(py, g.kernel_h) - rows);
  const int64_t left = std::max<int64_t>(0, -min_q(px, g.kernel_w));
  const int64_t right = std::max<int64_t>(0, g.out_w + max_q(px, g.kernel_w) - cols);
  const int64_t pitch = left + cols + right, phase_plane = (top + rows + bottom) * pitch;
  const int64_t phases = g.stride_h * g.stride_w;
  const int64_t x_size = phases * phase_plane + pitch + W, dy_size = g.out_h * pitch + W;
  if (x_size + dy_size > kMaxScratch) return depthwise_weight_plane_by_rows(g, x, dy, sums, strided_dot);
  float scratch[kMaxScratch];
  float* xs = scratch;
  float* dys = scratch + x_size;
  std::fill(scratch, scratch + x_size + dy_size, 0.0f);
  for (int64_t iy = 0; iy < g.in_h; ++iy) {
    const int64_t ry = iy % g.stride_h, jy = iy / g.stride_h;
    deinterleave(x + iy * g.in_w, g.in_w, g.stride_w,
                 xs + ry * g.stride_w * phase_plane + (top + jy) * pitch + left, phase_plane);
  }
  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    std::memcpy(dys + oy * pitch, dy + oy * g.out_w, static_cast<size_t>(g.out_w) * sizeof(float));
  }
  for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
    for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
      const float* phase = xs + (py[ky].r * g.stride_w + px[kx].r) * phase_plane;
      // A plane's products summed in f32 lanes, planes added in double: long batches stay exact.
      sums[ky * g.kernel_w + kx] +=
          flat_dot<W>(dys, phase + (top + py[ky].q) * pitch + left + px[kx].q, g.out_h * pitch);
    }
  }
}

using InputPlaneFn = void (*)(const ConvGeometry&, const float*, const float*, float*);
using WeightPlaneFn = void (*)(const ConvGeometry&, const float*, const float*, double*);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define POCK_DEPTHWISE_DISPATCH 1
__attribute__((target("arch=x86-64-v4"))) void input_plane_avx512(const ConvGeometry& g, const float* dy,
                                                                 const float* w, float* dx) {
  input_plane_at<16>(g, dy, w, dx);
}
__attribute__((target("arch=x86-64-v3"))) void input_plane_avx2(const ConvGeometry& g, const float* dy,
                                                               const float* w, float* dx) {
  input_plane_at<8>(g, dy, w, dx);
}
__attribute__((target("arch=x86-64-v4"))) void weight_plane_avx512(const ConvGeometry& g, const float* x,
                                                                  const float* dy, double* sums) {
  weight_plane_at<16>(g, x, dy, sums);
}
__attribute__((target("arch=x86-64-v3"))) void weight_plane_avx2(const ConvGeometry& g, const float* x,
                                                                const float* dy, double* sums) {
  weight_plane_at<8>(g, x, dy, sums);
}
#endif
void input_plane_baseline(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  input_plane_at<4>(g, dy, w, dx);
}
void weight_plane_baseline(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  weight_plane_at<4>(g, x, dy, sums);
}

DepthwiseGradLoops pick_loops() {
#ifdef POCK_DEPTHWISE_DISPATCH
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return {input_plane_avx512, weight_plane_avx512};
  if (__builtin_cpu_supports("x86-64-v3")) return {input_plane_avx2, weight_plane_avx2};
#endif
  return {input_plane_baseline, weight_plane_baseline};
}

int64_t taps(const ConvGeometry& g) { return g.kernel_h * g.kernel_w; }



// dx: one task per input plane (n, c); the plane sums the taps of every output channel of c.
// MobileNet's 3x3 windows at stride 1 or 2 on rows of 8 or more columns take whole-plane vector
// loops (depthwise_vector_rows.hpp), which beat the polyphase loops: 8x8 planes at stride 1 about
// 2x (there the channels-last copies ran them), the 64x64 stride-2 layer several times, and at 224
// pixels 192 channels at 14x14 stride 2 0.95 -> 0.20 ms, 576 at 14x14 1.31 -> 0.69 ms.
class DepthwiseConvGradInput final : public ConvKernel {
 public:
  DepthwiseConvGradInput(const ConvGeometry& g, int32_t num_threads, const DepthwiseGradLoops& loops)
      : g_(g),
        pool_(thread_pool_for(num_threads)),
        loops_(loops),
        vector_planes_(depthwise_vector_rows_take_input_gradient(g)) {}

  bool ready() const { return true; }

  Status run(const KernelCall& c) override {
    const float* dy = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    float* dx = c.out_data<float>(0);
    const size_t planes = static_cast<size_t>(g_.batch * g_.in_channels);
    const int64_t multiplier = g_.out_per_group();
    parallel_for(pool_, planes, balanced_tile(pool_, planes, 1), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t n = static_cast<int64_t>(p) / g_.in_channels, ch = static_cast<int64_t>(p) % g_.in_channels;
        const float* dy_plane = dy + (n * g_.out_channels + ch * multiplier) * g_.out_plane();
        const float* w_plane = w + ch * multiplier * taps(g_);
        float* dx_plane = dx + static_cast<int64_t>(p) * g_.in_plane();
        if (vector_planes_) {
          depthwise_vector_input_gradient_plane(g_, dy_plane, w_plane, dx_plane);
        } else {
          loops_.input_plane(g_, dy_plane, w_plane, dx_plane);
        }
      }
    });
    return Status::ok();
  }

 private:
  ConvGeometry g_;
  pthreadpool_t pool_;
  DepthwiseGradLoops loops_;
  bool vector_planes_;  // dx through depthwise_vector_input_gradient_plane
};

// dw: one task per output channel; each tap is a sum over the batch, kept in double in sums_
// (one row of taps per channel, allocated at prepare so that run() never allocates).
class DepthwiseConvGradWeight final : public ConvKernel {
 public:
  DepthwiseConvGradWeight(const ConvGeometry& g, int32_t num_threads, const DepthwiseGradLoops& loops, int64_t channels)
      : g_(g),
        pool_(thread_pool_for(num_threads)),
        loops_(loops),
        channels_(channels),
        sums_(new (std::nothrow) double[static_cast<size_t>(channels * taps(g))]),
        vector_planes_(depthwise_vector_rows_take(g)) {}

  bool ready() const { return sums_ != nullptr; }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* dy = c.in_data<float>(1);
    float* dw = c.out_data<float>(0);
    const size_t channels = static_cast<size_t>(channels_);
    parallel_for(pool_, channels, balanced_tile(pool_, channels, 1), [&](size_t begin, size_t end) {
      for (size_t o = begin; o < end; ++o) channel_taps(x, dy, static_cast<int64_t>(o), dw + o * taps(g_));
    });
    return Status::ok();
  }

 private:
  void channel_taps(const float* x, const float* dy, int64_t o, float* dw) const {
    const int64_t ch = o / g_.out_per_group();
    double* sums = sums_.get() + o * taps(g_);
    std::fill(sums, sums + taps(g_), 0.0);
    for (int64_t n = 0; n < g_.batch; ++n) {
      const float* x_plane = x + (n * g_.in_channels + ch) * g_.in_plane();
      const float* dy_plane = dy + (n * g_.out_channels + o) * g_.out_plane();
      if (vector_planes_) {
        depthwise_vector_weight_gradient_plane(g_, x_plane, dy_plane, sums);
      } else {
        loops_.weight_plane(g_, x_plane, dy_plane, sums);
      }
    }
    for (int64_t t = 0; t < taps(g_); ++t) dw[t] = static_cast<float>(sums[t]);
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  DepthwiseGradLoops loops_;
  int64_t channels_;
  std::unique_ptr<double[]> sums_;
  bool vector_planes_;  // the taps' sums through depthwise_vector_weight_gradient_plane
};

template <typename Kernel, typename... Args>
std::unique_ptr<ConvKernel> make(const pock_op_desc& op, const ConvGeometry& g, Status* status, Args... args) {
  *status = Status::ok();
  if (!g.is_depthwise()) return nullptr;
  auto kernel = std::unique_ptr<Kernel>(new (std::nothrow) Kernel(g, op.num_threads, args...));
  if (!kernel || !kernel->ready()) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " depthwise state");
    return nullptr;
  }
  return kernel;
}

}  // namespace

const DepthwiseGradLoops& cpu_depthwise_grad_loops() {
  static const DepthwiseGradLoops loops = pick_loops();
  return loops;
}

std::unique_ptr<ConvKernel> make_depthwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           const DepthwiseGradLoops& loops, Status* status) {
  return make<DepthwiseConvGradInput>(op, g, status, loops);
}

std::unique_ptr<ConvKernel> make_depthwise_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                            int64_t channels, const DepthwiseGradLoops& loops,
                                                            Status* status) {
  return make<DepthwiseConvGradWeight>(op, g, status, loops, channels);
}

}  // namespace pock::cpu
