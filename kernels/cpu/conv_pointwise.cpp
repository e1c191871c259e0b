// 1x1 convolutions (stride 1, unpadded, one group) on NCHW as direct register tiles, no GEMM
// library: y[n, o, p] = act(b[o] + sum over c of w[o, c] x[n, c, p]), and the input gradient
// dx[n, c, p] = sum over o of w[o, c] dy[n, o, p], the same product with the weight transposed.
//
// Why not sgemm: MobileNetV2's expansion layers reduce over 16-32 channels only (16 -> 96 at
// 64x64, 24 -> 144 at 32x32). With so short a reduction a GEMM library spends its time on what
// surrounds the multiply-adds: it zeroes or reads back the output around each block, packs the
// planes, and the bias and activation are two more passes over an output 6-9x the size of the
// input. Here each 6 x 16 tile of the output is 12 vector accumulators that start from the bias,
// take the whole reduction from the input rows in place (16 contiguous pixels of each channel),
// and are clamped and stored once. A constant weight is packed once into the tile order (6 output
// channels side by side per reduction step); a trainable one is read in place, live.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {
namespace {

constexpr int64_t kRows = 6;     // output channels of a register tile
constexpr int64_t kPixels = 16;  // pixels of a register tile: two 8-float vectors
constexpr int64_t kChunk = 64;   // pixels of one task: its input columns stay in L1 across the rows

std::atomic<int> made{0};

// Eight floats; the compiler maps it to one AVX register, two SSE / NEON registers. The helpers
// below are always inlined into their clone, so no call passes a Vec across an ABI (which GCC
// warns about for the baseline clone).
#pragma GCC diagnostic ignored "-Wpsabi"
using Vec = float __attribute__((vector_size(32)));

POCK_SIMD_INLINE Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
POCK_SIMD_INLINE void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
POCK_SIMD_INLINE Vec splat(float f) { return Vec{} + f; }

// NaN passes both selects, as through the activation kernels.
POCK_SIMD_INLINE Vec clamp(Vec v, Vec lo, Vec hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// One image's product: `rows` output planes from `depth` input planes of `plane` pixels.
struct Product {
  // A(r, k) = a[r / kRows * block_stride + r % kRows * row_stride + k * depth_stride]: a weight
  // packed into tile order (row_stride 1, depth_stride kRows), or read in place.
  const float* a;
  int64_t block_stride, row_stride, depth_stride;
  const float* bias;    // [rows] or null
  const float* in;      // [depth][plane]
  float* out;           // [rows][plane]
  int64_t rows, depth, plane;
  float lo, hi;  // the fused activation as a clamp (activation_epilogue.hpp)
};

template <int R>
POCK_SIMD_INLINE void tile(const Product& p, const float* w, int64_t row, int64_t px) {
  Vec acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = splat(p.bias ? p.bias[row + r] : 0.0f);
  const float* x = p.in + px;
  const int64_t rs = p.row_stride;
  for (int64_t k = 0; k < p.depth; ++k, x += p.plane, w += p.depth_stride) {
    const Vec x0 = load(x), x1 = load(x + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      acc[r][0] += w[r * rs] * x0;
      acc[r][1] += w[r * rs] * x1;
    }
  }
  const Vec lo = splat(p.lo), hi = splat(p.hi);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* y = p.out + (row + r) * p.plane + px;
    store(y, clamp(acc[r][0], lo, hi));
    store(y + 8, clamp(acc[r][1], lo, hi));
  }
}

// The pixels past the last whole tile of a row block, one at a time.
POCK_SIMD_INLINE void ragged_pixels(const Product& p, const float* w, int64_t row, int64_t rows, int64_t begin,
                                    int64_t end) {
  for (int64_t r = 0; r < rows; ++r) {
    const float b = p.bias ? p.bias[row + r] : 0.0f;
    for (int64_t px = begin; px < end; ++px) {
      float s = b;
      for (int64_t k = 0; k < p.depth; ++k) s += w[r * p.row_stride + k * p.depth_stride] * p.in[k * p.plane + px];
      s = s < p.lo ? p.lo : s;
      p.out[(row + r) * p.plane + px] = s > p.hi ? p.hi : s;
    }
  }
}

// Every output row of pixels [begin, end) of the image.
POCK_SIMD_CLONES void product_columns(const Product& p, int64_t begin, int64_t end) {
  for (int64_t row = 0; row < p.rows; row += kRows) {
    const int64_t rows = std::min(kRows, p.rows - row);
    const float* w = p.a + (row / kRows) * p.block_stride;
    int64_t px = begin;
    for (; px + kPixels <= end; px += kPixels) {
      switch (rows) {
        case 6: tile<6>(p, w, row, px); break;
        case 5: tile<5>(p, w, row, px); break;
        case 4: tile<4>(p, w, row, px); break;
        case 3: tile<3>(p, w, row, px); break;
        case 2: tile<2>(p, w, row, px); break;
        default: tile<1>(p, w, row, px); break;
      }
    }
    if (px < end) ragged_pixels(p, w, row, rows, px, end);
  }
}

// packed[block][k][r] = A(block * kRows + r, k), A(i, k) = a[i * row_stride + k * depth_stride].
// Each block is read along A's contiguous direction: rows of the forward's [O, C] weight, runs of
// six along the input gradient's transposed reading (a strided read cost MobileNetV2's step 2 ms).
void pack_rows(const float* a, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth, float* packed) {
  for (int64_t block = 0; block < rows; block += kRows, packed += depth * kRows) {
    const int64_t n = std::min(kRows, rows - block);
    if (n < kRows) std::fill(packed, packed + depth * kRows, 0.0f);
    if (depth_stride == 1) {
      for (int64_t r = 0; r < n; ++r) {
        const float* row = a + (block + r) * row_stride;
        for (int64_t k = 0; k < depth; ++k) packed[k * kRows + r] = row[k];
      }
    } else {
      for (int64_t k = 0; k < depth; ++k) {
        const float* run = a + k * depth_stride + block * row_stride;
        for (int64_t r = 0; r < n; ++r) packed[k * kRows + r] = run[r * row_stride];
      }
    }
  }
}

}  // namespace

size_t packed_rows_floats(int64_t rows, int64_t depth) {
  return static_cast<size_t>((rows + kRows - 1) / kRows * kRows * depth);
}

void pack_product_rows(const float* a, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth,
                       float* packed) {
  pack_rows(a, row_stride, depth_stride, rows, depth, packed);
}

void direct_product(const float* packed, const float* bias, const float* in, float* out, int64_t rows, int64_t depth,
                    int64_t plane, Activation activation, pthreadpool_t pool) {
  const Clamp clamp = clamp_of(activation);
  const Product p{packed, depth * kRows, 1, kRows, bias, in, out, rows, depth, plane, clamp.lo, clamp.hi};
  const size_t chunks = static_cast<size_t>((plane + kChunk - 1) / kChunk);
  parallel_for(pool, chunks, balanced_tile(pool, chunks, 1), [&](size_t begin, size_t end) {
    product_columns(p, static_cast<int64_t>(begin) * kChunk, std::min(plane, static_cast<int64_t>(end) * kChunk));
  });
}

namespace {

class PointwiseConv final : public ConvKernel {
 public:
  PointwiseConv(const ConvGeometry& g, ConvDirection direction, int32_t num_threads, KernelScope& scope)
      : g_(g), forward_(direction == ConvDirection::kForward), pool_(thread_pool_for(num_threads)), scope_(&scope) {}

  // A constant weight is packed once, here, into a buffer of the kernel's own. A trainable one is
  // read in place through strides: packing it on every run (forward and input gradient; 2.5 % of
  // MobileNetV2's sparse-late step under perf) measured no faster in all than the strided reads.
  Status init(const pock_tensor_desc& w) {
    if (!is_constant(w)) return Status::ok();
    POCK_RETURN_IF_ERROR(frozen_.allocate(packed_rows_floats(rows(), depth()) * sizeof(float),
                                          "Conv2d pointwise packed weight"));
    const float* weight = static_cast<const float*>(w.data);
    float* packed = reinterpret_cast<float*>(frozen_.data());
    // w is [O, C]: the forward's rows are its rows, the input gradient's its columns.
    if (forward_) {
      pack_rows(weight, g_.in_channels, 1, rows(), depth(), packed);
    } else {
      pack_rows(weight, 1, g_.in_channels, rows(), depth(), packed);
    }
    return Status::ok();
  }

  Status run(const KernelCall& c) override {
    const float* in = c.in_data<float>(0);
    float* out = c.out_data<float>(0);
    const Clamp clamp = clamp_of(forward_ ? g_.activation : Activation::kNone);
    Product p{nullptr, depth() * kRows, 1, kRows, forward_ && g_.has_bias ? c.in_data<float>(2) : nullptr,
              nullptr, nullptr, rows(), depth(), g_.out_plane(), clamp.lo, clamp.hi};
    if (frozen_.data()) {
      p.a = reinterpret_cast<const float*>(frozen_.data());
    } else {
      const int64_t c_stride = forward_ ? g_.in_channels : 1, o_stride = forward_ ? 1 : g_.in_channels;
      p.a = c.in_data<float>(1);
      p.row_stride = c_stride;    // between output rows of the product
      p.depth_stride = o_stride;  // between reduction steps
      p.block_stride = kRows * c_stride;
    }
    const int64_t chunks = (p.plane + kChunk - 1) / kChunk;
    const size_t tasks = static_cast<size_t>(g_.batch * chunks);
    parallel_for(pool_, tasks, balanced_tile(pool_, tasks, 1), [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const int64_t n = static_cast<int64_t>(t) / chunks, chunk = static_cast<int64_t>(t) % chunks;
        Product image = p;
        image.in = in + n * p.depth * p.plane;
        image.out = out + n * p.rows * p.plane;
        product_columns(image, chunk * kChunk, std::min(p.plane, (chunk + 1) * kChunk));
      }
    });
    return Status::ok();
  }

 private:
  // The product's output rows and reduction depth: O and C forward, C and O for the gradient.
  int64_t rows() const { return forward_ ? g_.out_channels : g_.in_channels; }
  int64_t depth() const { return forward_ ? g_.in_channels : g_.out_channels; }

  ConvGeometry g_;
  bool forward_;
  pthreadpool_t pool_;
  KernelScope* scope_;
  AlignedBuffer frozen_;  // the packed constant weight; empty for a trainable one
};

std::unique_ptr<ConvKernel> make(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction,
                                 KernelScope& scope, Status* status) {
  *status = Status::ok();
  if (!is_pointwise(g)) return nullptr;
  auto kernel = std::unique_ptr<PointwiseConv>(new (std::nothrow) PointwiseConv(g, direction, op.num_threads, scope));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, "Conv2d pointwise state");
    return nullptr;
  }
  *status = kernel->init(op.inputs[1]);
  if (!status->is_ok()) return nullptr;
  ++made;
  return kernel;
}

}  // namespace

bool is_pointwise(const ConvGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0 && g.groups == 1;
}

bool pointwise_preferred(const ConvGeometry& g, ConvDirection direction) {
  const int64_t depth = direction == ConvDirection::kForward ? g.in_channels : g.out_channels;
  return is_pointwise(g) && depth <= kPointwiseMaxDepth && g.out_plane() >= kPixels;
}

std::unique_ptr<ConvKernel> make_pointwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                Status* status) {
  return make(op, g, ConvDirection::kForward, scope, status);
}

std::unique_ptr<ConvKernel> make_pointwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           KernelScope& scope, Status* status) {
  return make(op, g, ConvDirection::kInputGrad, scope, status);
}

namespace conv_pointwise_testing {
int kernels_made() { return made.load(); }
}  // namespace conv_pointwise_testing

}  // namespace pock::cpu
