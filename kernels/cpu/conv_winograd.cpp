// Winograd F(4x4,3x3) convolutions (conv_winograd.hpp). One run: the weight's transform U
// [36][O][C] (unless it was made at prepare), the input's V [C][36][T] over all T tiles of the
// batch, the 36 products M[xi] = U[xi] V[xi] through parallel_sgemm_batch, and the output
// transform of M [O][36][T] back to NCHW with the bias and activation. Tile t = (n * tiles_h + ty)
// * tiles_w + tx, so that one channel's tiles of one tile row are contiguous in V and M.
// V and M keep a channel's 36 rows together, which the GEMMs read through a row stride of 36 T:
// with [36][C][T] each transform call touched 36 rows megabytes apart, and its loads and stores
// missed the caches (half of the 64-channel layer's time); together, a channel's rows stay in L2
// while its transform runs.
#include "kernels/cpu/conv_winograd.hpp"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/conv_winograd_transforms.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#ifdef POCK_HAVE_OPENBLAS
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#endif

namespace pock::cpu {

bool winograd_conv_takes(const ConvGeometry& g) {
  const bool pads_fit = g.pad_top <= 2 && g.pad_left <= 2 && g.pad_bottom <= 2 && g.pad_right <= 2;
  return g.groups == 1 && g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 &&
         g.dilation_h == 1 && g.dilation_w == 1 && pads_fit;
}

namespace {

using conv_winograd_testing::Choice;

Choice choice_from_environment() {
  const char* v = std::getenv("POCK_CPU_CONV");
  if (v && std::string_view(v) == "direct") return Choice::kNever;
  if (v && std::string_view(v) == "winograd") return Choice::kAlways;
  return Choice::kByRule;
}
std::atomic<Choice> forced{choice_from_environment()};
std::atomic<int> made{0};

#ifdef POCK_HAVE_OPENBLAS

// The convolution the transforms compute: the forward one, or the input gradient's equivalent
// (dy in, dx out, padding 2 - pad; conv_winograd.hpp).
struct Plan {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0, out_channels = 0, out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  // The input gradient's: U holds the rotated kernels in w's own [O][C] order, which the GEMMs
  // read transposed (winograd::weight_row).
  bool rotate_swap = false;
  // U's rows: w's output channels (out_channels forward, in_channels for the input gradient).
  int64_t weight_rows() const { return rotate_swap ? in_channels : out_channels; }
  int64_t weight_cols() const { return rotate_swap ? out_channels : in_channels; }

  int64_t tiles() const { return batch * tiles_h * tiles_w; }
  // The row stride of V and M: the row transforms write and read whole vectors of
  // kTilesPerCall tiles (conv_winograd_transforms.hpp), which may run past a row's last tile.
  int64_t row_stride() const {
    constexpr int64_t kLanes = winograd::kTilesPerCall;
    return (tiles() + 2 * kLanes - 1) / kLanes * kLanes;
  }
  // Calls of the row transforms per (channel, image, tile row).
  int64_t chunks_w() const { return (tiles_w + winograd::kTilesPerCall - 1) / winograd::kTilesPerCall; }
  size_t u_floats() const { return static_cast<size_t>(winograd::kElements * out_channels * in_channels); }
  size_t v_floats() const { return static_cast<size_t>(winograd::kElements * in_channels * row_stride()); }
  size_t m_floats() const { return static_cast<size_t>(winograd::kElements * out_channels * row_stride()); }
};

Plan plan_of(const ConvGeometry& g, ConvDirection direction) {
  Plan p;
  p.batch = g.batch;
  if (direction == ConvDirection::kForward) {
    p.in_channels = g.in_channels, p.in_h = g.in_h, p.in_w = g.in_w;
    p.out_channels = g.out_channels, p.out_h = g.out_h, p.out_w = g.out_w;
    p.pad_top = g.pad_top, p.pad_left = g.pad_left;
  } else {
    p.in_channels = g.out_channels, p.in_h = g.out_h, p.in_w = g.out_w;
    p.out_channels = g.in_channels, p.out_h = g.in_h, p.out_w = g.in_w;
    p.pad_top = g.kernel_h - 1 - g.pad_top, p.pad_left = g.kernel_w - 1 - g.pad_left;
    p.rotate_swap = true;
  }
  p.tiles_h = (p.out_h + winograd::kTile - 1) / winograd::kTile;
  p.tiles_w = (p.out_w + winograd::kTile - 1) / winograd::kTile;
  return p;
}

// The speed rule: Winograd where it measured faster than the backend's other ways, on one core of
// the benchmark machine (AMD EPYC, AVX-512; benchmarks/conv_winograd_bench.cpp, ResNet-18's 3x3
// layers at 128x128, batch 8, frozen weights; median of 3, machine shared with other builds, load
// 6-9), direct-convolution GFLOP per CPU second, forward / input gradient:
//   64 ch at 32x32:   Winograd 134 / 144, other ways  99 / 102  (oneDNN's Winograd 236 / 221)
//   128 ch at 16x16:  Winograd 162 / 169, other ways 105 / 105  (oneDNN 218 / 208)
//   256 ch at 8x8:    Winograd 126 / 119, other ways  75 /  79  (oneDNN 154 / 143)
//   512 ch at 4x4:    Winograd  49 /  44, other ways  54 /  38  (oneDNN's direct 110 / 94)
// On a 4x4 plane each tile's 6x6 input is mostly padding, and with one tile per image the 36
// GEMMs have 8 columns: Winograd no longer pays. Fewer than 64 channels were not measured.
bool rule(const Plan& p) { return p.in_channels >= 64 && p.out_channels >= 64 && p.out_h * p.out_w >= 64; }

// A frozen weight's transform kept from prepare on. Bounded: U is four times the weight, and
// ResNet-18's sparse scheme freezes every weight, so keeping all of them (forward and input
// gradient) would add ~75 MB to its footprint (the 4 MiB bound keeps layers 1-2's, 19 MB), and
// its peak RSS must stay under a quarter of PyTorch's full BP; above the bound U is made per run
// in scratch (at 256 channels a small part of the convolution's time).
constexpr size_t kFrozenTransformMaxBytes = size_t{4} << 20;

struct FrozenTransform {
  std::vector<float> u;
};

// All rows of U from the weight w, rows split over the pool.
void transform_weight(const Plan& p, const float* w, float* u, pthreadpool_t pool) {
  const size_t rows = static_cast<size_t>(p.weight_rows());
  parallel_for(pool, rows, balanced_tile(pool, rows, 4), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      winograd::weight_row(w, static_cast<int64_t>(r), p.weight_rows(), p.weight_cols(), p.rotate_swap, u);
    }
  });
}

class WinogradConv final : public ConvKernel {
 public:
  WinogradConv(const Plan& p, bool forward, const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : p_(p), bias_(forward && g.has_bias), clamp_(clamp_of(forward ? g.activation : Activation::kNone)),
        pool_(thread_pool_for(num_threads)), scope_(&scope) {}

  Status init(const pock_op_desc& op) {
    const pock_tensor_desc& w = op.inputs[1];
    const size_t u_bytes = p_.u_floats() * sizeof(float);
    if (is_constant(w) && w.data && u_bytes <= kFrozenTransformMaxBytes) {
      POCK_RETURN_IF_ERROR(share_frozen_transform(w));
    }
    // Each block 64-byte aligned: whole cache lines per matrix row start where possible.
    const auto aligned = [](size_t floats) { return (floats + 15) / 16 * 16; };
    v_at_ = frozen_ ? 0 : aligned(p_.u_floats());
    m_at_ = v_at_ + aligned(p_.v_floats());
    return scope_->reserve_scratch((m_at_ + p_.m_floats()) * sizeof(float), "Winograd convolution tiles");
  }

  Status run(const KernelCall& c) override {
    // Read at run time: the region may move while later ops are prepared.
    float* scratch = reinterpret_cast<float*>(scope_->scratch());
    const float* u = frozen_ ? frozen_->u.data() : scratch;
    if (!frozen_) transform_weight(p_, c.in_data<float>(1), scratch, pool_);
    float* v = scratch + v_at_;
    float* m = scratch + m_at_;
    transform_input(c.in_data<float>(0), v);
    multiply(u, v, m);
    transform_output(m, bias_ ? c.in_data<float>(2) : nullptr, c.out_data<float>(0));
    return Status::ok();
  }

 private:
  Status share_frozen_transform(const pock_tensor_desc& w) {
    const std::string key = std::string("winograd.u ") + (p_.rotate_swap ? "grad " : "forward ") +
                            std::to_string(reinterpret_cast<uintptr_t>(w.data)) + " " +
                            std::to_string(p_.out_channels) + " " + std::to_string(p_.in_channels);
    frozen_ = std::static_pointer_cast<FrozenTransform>(scope_->find_shared(key));
    if (frozen_) return Status::ok();
    try {
      frozen_ = std::make_shared<FrozenTransform>();
      frozen_->u.resize(p_.u_floats());
    } catch (const std::bad_alloc&) {
      return Status(Code::kOutOfMemory, "Winograd convolution: the frozen weight's transform");
    }
    transform_weight(p_, static_cast<const float*>(w.data), frozen_->u.data(), pool_);
    if (!scope_->put_shared(key, frozen_, p_.u_floats() * sizeof(float))) {
      return Status(Code::kOutOfMemory, "Winograd convolution: the frozen weight's transform");
    }
    return Status::ok();
  }

  // The row transforms over one channel's planes, channels split over the pool. A channel's tile
  // chunks run in order, so that the spare lanes each call writes past its chunk land on tiles
  // the next call writes again, or in the row's padding (Plan::row_stride).
  template <typename Body>
  void for_each_channel(int64_t channels, const Body& body) const {
    const size_t n = static_cast<size_t>(channels);
    parallel_for(pool_, n, balanced_tile(pool_, n, 4), [&](size_t begin, size_t end) {
      for (size_t c = begin; c < end; ++c) {
        for (int64_t row = 0; row < p_.batch * p_.tiles_h; ++row) {
          for (int64_t tx0 = 0; tx0 < p_.tiles_w; tx0 += winograd::kTilesPerCall) {
            const int64_t count = std::min(winograd::kTilesPerCall, p_.tiles_w - tx0);
            body(static_cast<int64_t>(c), row / p_.tiles_h, row % p_.tiles_h, tx0, count, row * p_.tiles_w + tx0);
          }
        }
      }
    });
  }

  void transform_input(const float* x, float* v) const {
    const int64_t t = p_.row_stride();
    for_each_channel(p_.in_channels, [&](int64_t c, int64_t n, int64_t ty, int64_t tx0, int64_t count, int64_t tile) {
      const float* plane = x + (n * p_.in_channels + c) * p_.in_h * p_.in_w;
      winograd::input_tiles({plane, p_.in_h, p_.in_w, p_.pad_top, p_.pad_left, ty, tx0, count},
                            v + c * winograd::kElements * t + tile, t);
    });
  }

  void multiply(const float* u, const float* v, float* m) const {
    const int64_t o = p_.out_channels, c = p_.in_channels, t = p_.row_stride();
    parallel_sgemm_batch(pool_, winograd::kElements, [&](int64_t xi) {
      SgemmCall call;
      call.m = o, call.n = p_.tiles(), call.k = c;
      call.transpose_a = p_.rotate_swap;
      call.a = u + xi * o * c, call.lda = p_.weight_cols();
      call.b = v + xi * t, call.ldb = winograd::kElements * t;
      call.c = m + xi * t, call.ldc = winograd::kElements * t;
      return call;
    });
  }

  void transform_output(const float* m, const float* bias, float* y) const {
    const int64_t t = p_.row_stride();
    for_each_channel(p_.out_channels, [&](int64_t o, int64_t n, int64_t ty, int64_t tx0, int64_t count, int64_t tile) {
      float* plane = y + (n * p_.out_channels + o) * p_.out_h * p_.out_w;
      winograd::output_tiles(m + o * winograd::kElements * t + tile, t,
                             {plane, p_.out_h, p_.out_w, ty, tx0, count, bias ? bias[o] : 0.0f, clamp_});
    });
  }

  Plan p_;
  bool bias_;
  Clamp clamp_;
  pthreadpool_t pool_;
  KernelScope* scope_;
  std::shared_ptr<FrozenTransform> frozen_;  // null: U is made per run at the scratch's start
  size_t v_at_ = 0, m_at_ = 0;               // floats from the scratch's start
};

#endif  // POCK_HAVE_OPENBLAS

}  // namespace

namespace conv_winograd_testing {
void set_choice(Choice c) { forced = c; }
Choice choice() { return forced.load(); }
int kernels_made() { return made.load(); }
}  // namespace conv_winograd_testing

std::unique_ptr<ConvKernel> make_winograd_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction,
                                               KernelScope& scope, Status* status) {
  *status = Status::ok();
#ifndef POCK_HAVE_OPENBLAS
  (void)op, (void)g, (void)direction, (void)scope;
  return nullptr;  // the 36 products need OpenBLAS's sgemm
#else
  if (!winograd_conv_takes(g)) return nullptr;
  configure_blas_threads(op.num_threads);  // each of the 36 products on one OpenBLAS thread
  std::unique_ptr<WinogradConv> conv;
  try {
    conv = std::make_unique<WinogradConv>(plan_of(g, direction), direction == ConvDirection::kForward, g,
                                          op.num_threads, scope);
  } catch (const std::bad_alloc&) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': Winograd convolution state");
    return nullptr;
  }
  *status = conv->init(op);
  if (!status->is_ok()) return nullptr;
  ++made;
  return conv;
#endif
}

std::unique_ptr<ConvKernel> make_winograd_conv_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                       ConvDirection direction, KernelScope& scope, Status* status) {
  *status = Status::ok();
#ifndef POCK_HAVE_OPENBLAS
  (void)op, (void)g, (void)direction, (void)scope;
  return nullptr;
#else
  if (!winograd_conv_takes(g)) return nullptr;
  const Choice c = forced.load();
  if (c == Choice::kNever || (c == Choice::kByRule && !rule(plan_of(g, direction)))) return nullptr;
  return make_winograd_conv(op, g, direction, scope, status);
#endif
}

}  // namespace pock::cpu
