// 1x1 convolutions (stride 1, unpadded, one group) on NCHW as the direct register tiles of
// short_product.hpp, no GEMM library: y[n, o, p] = act(b[o] + sum over c of w[o, c] x[n, c, p]),
// and the input gradient dx[n, c, p] = sum over o of w[o, c] dy[n, o, p], the same product with
// the weight transposed. MobileNetV2's expansion layers reduce over 16-32 channels only (16 -> 96
// at 64x64, 24 -> 144 at 32x32), where sgemm spends its time around the multiply-adds. A constant
// weight is packed once into the tile order; a trainable one is read in place, live.
#include <algorithm>
#include <atomic>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/short_product.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {
namespace {

std::atomic<int> made{0};

class PointwiseConv final : public ConvKernel {
 public:
  PointwiseConv(const ConvGeometry& g, ConvDirection direction, int32_t num_threads, KernelScope& scope)
      : g_(g), forward_(direction == ConvDirection::kForward), pool_(thread_pool_for(num_threads)), scope_(&scope) {}

  // A constant weight is packed once, here, into a buffer of the kernel's own. A trainable one is
  // read in place through strides: packing it on every run (forward and input gradient; 2.5 % of
  // MobileNetV2's sparse-late step under perf) measured no faster in all than the strided reads.
  Status init(const pock_tensor_desc& w) {
    if (!is_constant(w)) return Status::ok();
    POCK_RETURN_IF_ERROR(frozen_.allocate(packed_short_rows_floats(rows(), depth()) * sizeof(float),
                                          "Conv2d pointwise packed weight"));
    const float* weight = static_cast<const float*>(w.data);
    float* packed = reinterpret_cast<float*>(frozen_.data());
    // w is [O, C]: the forward's rows are its rows, the input gradient's its columns.
    if (forward_) {
      pack_short_rows(weight, g_.in_channels, 1, rows(), depth(), packed);
    } else {
      pack_short_rows(weight, 1, g_.in_channels, rows(), depth(), packed);
    }
    return Status::ok();
  }

  Status run(const KernelCall& c) override {
    const float* in = c.in_data<float>(0);
    float* out = c.out_data<float>(0);
    // w is [O, C]: the forward's rows are its rows, the input gradient's its columns.
    ShortProduct p = frozen_.data() ? short_product_packed(reinterpret_cast<const float*>(frozen_.data()), depth())
                     : forward_     ? short_product_in_place(c.in_data<float>(1), g_.in_channels, 1)
                                    : short_product_in_place(c.in_data<float>(1), 1, g_.in_channels);
    const Clamp clamp = clamp_of(forward_ ? g_.activation : Activation::kNone);
    p.lo = clamp.lo;
    p.hi = clamp.hi;
    p.bias = forward_ && g_.has_bias ? c.in_data<float>(2) : nullptr;
    p.rows = rows();
    p.depth = depth();
    p.plane = g_.out_plane();
    const int64_t chunks = (p.plane + kShortChunk - 1) / kShortChunk;
    const size_t tasks = static_cast<size_t>(g_.batch * chunks);
    parallel_for(pool_, tasks, balanced_tile(pool_, tasks, 1), [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const int64_t n = static_cast<int64_t>(t) / chunks, chunk = static_cast<int64_t>(t) % chunks;
        ShortProduct image = p;
        image.in = in + n * p.depth * p.plane;
        image.out = out + n * p.rows * p.plane;
        short_product_columns(image, chunk * kShortChunk, std::min(p.plane, (chunk + 1) * kShortChunk));
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
  return is_pointwise(g) && depth <= kShortProductMaxDepth && g.out_plane() >= kShortPixels;
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
