// Vectorized elementwise kernels: Add/Sub/Mul/Div, the activations of CNNs and transformers, and
// Cast f32 -> bf16 (the compiler's bf16 copies of GEMM operands).
// The broadcast patterns that dominate real models (broadcast_pattern.hpp: same shape, a scalar, a
// row repeated over leading dims — bias adds, per-feature scales — or per-channel values over NCHW
// planes) have direct loops; any other broadcast (an attention mask [N,1,1,S] over [N,H,S,S], both
// operands broadcasting) walks the output (strided_walk.hpp) with the same loops on each row.
#include <algorithm>
#include <cstddef>

#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/broadcast_pattern.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/strided_walk.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::cpu {
namespace {

// Below this many elements a loop is not worth handing to the pool.
constexpr size_t kMinParallelElements = size_t{1} << 15;

// ---- binary ---------------------------------------------------------------------------------

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPRelu };

template <typename F>
POCK_SIMD_INLINE void apply_binary(BinaryOp op, F&& loop) {
  switch (op) {
    case BinaryOp::kAdd: loop([](float a, float b) { return a + b; }); break;
    case BinaryOp::kSub: loop([](float a, float b) { return a - b; }); break;
    case BinaryOp::kMul: loop([](float a, float b) { return a * b; }); break;
    case BinaryOp::kDiv: loop([](float a, float b) { return a / b; }); break;
    case BinaryOp::kPRelu: loop([](float x, float slope) { return x > 0.0f ? x : x * slope; }); break;
  }
}

// y = a op b over n elements; a scalar side is read through a zero stride so that one loop serves
// the vector-vector, vector-scalar and scalar-vector patterns.
POCK_SIMD_CLONES void binary_vv(BinaryOp op, const float* a, const float* b, float* y, int64_t n) {
  apply_binary(op, [&](auto f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  });
}

POCK_SIMD_CLONES void binary_vs(BinaryOp op, const float* a, float b, float* y, int64_t n) {
  apply_binary(op, [&](auto f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b);
  });
}

POCK_SIMD_CLONES void binary_sv(BinaryOp op, float a, const float* b, float* y, int64_t n) {
  apply_binary(op, [&](auto f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a, b[i]);
  });
}

// Any broadcast: each output row pairs a contiguous, constant or strided run of each operand.
template <BinaryOp kOp>
void binary_walk(const KernelCall& c, pthreadpool_t pool) {
  const StridedWalk w = binary_broadcast_walk(c);
  const float* a = c.in_data<float>(0);
  const float* b = c.in_data<float>(1);
  float* y = c.out_data<float>(0);
  const int64_t inner = w.inner(), sa = w.inner_stride(0), sb = w.inner_stride(1);
  for_each_row_parallel(w, pool, kMinParallelElements / 4, [&](int64_t o, const int64_t* in) {
    const float *ra = a + in[0], *rb = b + in[1];
    if (sa == 1 && sb == 1) {
      binary_vv(kOp, ra, rb, y + o, inner);
    } else if (sa == 1 && sb == 0) {
      binary_vs(kOp, ra, *rb, y + o, inner);
    } else if (sa == 0 && sb == 1) {
      binary_sv(kOp, *ra, rb, y + o, inner);
    } else {
      for (int64_t i = 0; i < inner; ++i) binary_vs(kOp, ra + i * sa, rb[i * sb], y + o + i, 1);
    }
  });
}

// The output is f32, or bf16 where the compiler had the op write the bf16 copy of a GEMM operand
// itself (output_dtype "bf16", src/compiler/lowering/bf16_producers.hpp), written in chunks
// (binary_to_bf16) for run_patterns; the compiler asks for no other (bf16_producers.cpp's
// operand_read), and any other would run on ref.
bool binary_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  if (!is_f32(a) || !is_f32(b) || a.rank > y.rank || b.rank > y.rank) return false;
  if (y.dtype == POCK_BF16) return run_patterns(a, b, y);
  return is_f32(y) && y.rank <= kWalkMaxRank;
}

// f32 results a few cache lines at a time, converted before they leave L1.
constexpr int64_t kBf16Chunk = 1024;

// y (bf16) = a op b, for run_patterns: chunks that never cross the end of a row operand.
template <BinaryOp kOp>
void binary_to_bf16(const KernelCall& c, BroadcastPattern ka, BroadcastPattern kb, pthreadpool_t pool) {
  const float* a = c.in_data<float>(0);
  const float* b = c.in_data<float>(1);
  auto* y = static_cast<uint16_t*>(c.out(0).data);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  const size_t row_a = ka == BroadcastPattern::kRow ? static_cast<size_t>(numel(c.in(0))) : 0;
  const size_t row_b = kb == BroadcastPattern::kRow ? static_cast<size_t>(numel(c.in(1))) : 0;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    alignas(64) float chunk[kBf16Chunk];
    for (size_t i = begin; i < end;) {
      size_t len = std::min<size_t>(kBf16Chunk, end - i);
      if (row_a) len = std::min(len, row_a - i % row_a);
      if (row_b) len = std::min(len, row_b - i % row_b);
      const float* ra = row_a ? a + i % row_a : a + i;
      const float* rb = row_b ? b + i % row_b : b + i;
      const int64_t count = static_cast<int64_t>(len);
      if (ka == BroadcastPattern::kScalar) binary_sv(kOp, a[0], rb, chunk, count);
      else if (kb == BroadcastPattern::kScalar) binary_vs(kOp, ra, b[0], chunk, count);
      else binary_vv(kOp, ra, rb, chunk, count);
      convert_to_bf16(chunk, count, y + i);  // as the Cast it replaces (cast_to_bf16 below)
      i += len;
    }
  });
}

template <BinaryOp kOp>
Status binary_kernel(const KernelCall& c) {
  int64_t inner_a = 1, inner_b = 1;
  const BroadcastPattern ka = broadcast_pattern(c.in(0), c.out(0), &inner_a);
  const BroadcastPattern kb = broadcast_pattern(c.in(1), c.out(0), &inner_b);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  if (n == 0) return Status::ok();
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  if (c.out(0).dtype == POCK_BF16) {
    binary_to_bf16<kOp>(c, ka, kb, pool);
    return Status::ok();
  }
  const float* a = c.in_data<float>(0);
  const float* b = c.in_data<float>(1);
  float* y = c.out_data<float>(0);
  const bool one_full = ka == BroadcastPattern::kFull || kb == BroadcastPattern::kFull;
  if (!one_full || ka == BroadcastPattern::kOther || kb == BroadcastPattern::kOther) {
    binary_walk<kOp>(c, pool);
    return Status::ok();
  }

  if (ka == BroadcastPattern::kChannel || kb == BroadcastPattern::kChannel) {
    // Each channel value applies to a run of `inner` outputs; the runs cycle through the channels.
    const bool channel_is_b = kb == BroadcastPattern::kChannel;
    const float* values = channel_is_b ? b : a;
    const float* full = channel_is_b ? a : b;
    const size_t inner = static_cast<size_t>(channel_is_b ? inner_b : inner_a);
    const size_t channels = static_cast<size_t>(numel(channel_is_b ? c.in(1) : c.in(0)));
    const size_t runs = n / inner;
    const size_t tile = balanced_tile(pool, runs, (kMinParallelElements / 4 + inner - 1) / inner);
    parallel_for(pool, runs, tile, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const float v = values[r % channels];
        const float* f = full + r * inner;
        if (channel_is_b) binary_vs(kOp, f, v, y + r * inner, static_cast<int64_t>(inner));
        else binary_sv(kOp, v, f, y + r * inner, static_cast<int64_t>(inner));
      }
    });
    return Status::ok();
  }
  if (ka == BroadcastPattern::kRow || kb == BroadcastPattern::kRow) {
    const bool row_is_b = kb == BroadcastPattern::kRow;
    const float* row = row_is_b ? b : a;
    const float* full = row_is_b ? a : b;
    const size_t width = static_cast<size_t>(numel(row_is_b ? c.in(1) : c.in(0)));
    const size_t rows = n / width;
    const size_t tile = balanced_tile(pool, rows, (kMinParallelElements / 4 + width - 1) / width);
    parallel_for(pool, rows, tile, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const float* f = full + r * width;
        if (row_is_b) binary_vv(kOp, f, row, y + r * width, static_cast<int64_t>(width));
        else binary_vv(kOp, row, f, y + r * width, static_cast<int64_t>(width));
      }
    });
    return Status::ok();
  }
  const size_t tile = balanced_tile(pool, n, kMinParallelElements / 4);
  parallel_for(pool, n, tile, [&](size_t begin, size_t end) {
    const int64_t count = static_cast<int64_t>(end - begin);
    if (ka == BroadcastPattern::kScalar) binary_sv(kOp, a[0], b + begin, y + begin, count);
    else if (kb == BroadcastPattern::kScalar) binary_vs(kOp, a + begin, b[0], y + begin, count);
    else binary_vv(kOp, a + begin, b + begin, y + begin, count);
  });
  return Status::ok();
}

// ---- unary ----------------------------------------------------------------------------------

enum class UnaryOp {
  kRelu,
  kRelu6,
  kHardSwish,
  kSigmoid,
  kSilu,
  kGeluErf,
  kGeluTanh,
  kElu,
  kSelu,
  kCelu,
  kSoftplus,
  kSoftsign,
  kThresholdedRelu,
  kMish,
};

// alpha, gamma: the ONNX attributes of the ops that have them (params::ActivationParams).
POCK_SIMD_CLONES void unary_loop(UnaryOp op, const float* x, float* y, int64_t n, float alpha, float gamma) {
  auto loop = [&](auto f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  };
  switch (op) {
    // Written so that NaN fails every comparison and passes through, as in PyTorch.
    // The selects go through simd::select: as conditionals, in this switch, GCC makes branches.
    case UnaryOp::kRelu: loop([](float v) { return simd::select(v < 0.0f, 0.0f, v); }); break;
    case UnaryOp::kRelu6:
      loop([](float v) { return simd::select(v < 0.0f, 0.0f, simd::select(v > 6.0f, 6.0f, v)); });
      break;
    case UnaryOp::kHardSwish:
      loop([](float v) { return v * simd::min(simd::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f); });
      break;
    case UnaryOp::kSigmoid: loop([](float v) { return simd::sigmoid(v); }); break;
    case UnaryOp::kSilu: loop([](float v) { return v * simd::sigmoid(v); }); break;
    case UnaryOp::kGeluErf:
      loop([](float v) { return 0.5f * v * (1.0f + simd::erf(v * 0.70710678118654752f)); });
      break;
    case UnaryOp::kGeluTanh:
      // 0.5 v (1 + tanh(z)) = v * sigmoid(2z): no cancellation where tanh(z) is near -1.
      loop([](float v) { return v * simd::sigmoid(1.5957691216057308f * (v + 0.044715f * v * v * v)); });
      break;
    case UnaryOp::kElu:
      loop([alpha](float v) { return simd::select(v > 0.0f, v, alpha * (simd::exp(v) - 1.0f)); });
      break;
    case UnaryOp::kSelu:
      loop([alpha, gamma](float v) { return gamma * simd::select(v > 0.0f, v, alpha * (simd::exp(v) - 1.0f)); });
      break;
    case UnaryOp::kCelu:
      loop([alpha](float v) { return simd::select(v > 0.0f, v, alpha * (simd::exp(v / alpha) - 1.0f)); });
      break;
    case UnaryOp::kSoftplus: loop([](float v) { return simd::softplus(v); }); break;
    case UnaryOp::kSoftsign: loop([](float v) { return v / (1.0f + simd::select(v < 0.0f, -v, v)); }); break;
    case UnaryOp::kThresholdedRelu: loop([alpha](float v) { return simd::select(v > alpha, v, 0.0f); }); break;
    case UnaryOp::kMish: loop([](float v) { return v * simd::tanh_softplus(v); }); break;
  }
}

// The output is f32, or bf16 where the compiler had the activation write the bf16 copy of a GEMM
// operand itself (src/compiler/lowering/bf16_producers.hpp).
bool unary_accepts(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]) &&
         (is_f32(op.outputs[0]) || op.outputs[0].dtype == POCK_BF16) && numel(op.inputs[0]) == numel(op.outputs[0]);
}

void run_unary(const KernelCall& c, UnaryOp op, float alpha = 0.0f, float gamma = 0.0f) {
  const float* x = c.in_data<float>(0);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  const size_t tile = balanced_tile(pool, n, kMinParallelElements / 4);
  if (c.out(0).dtype == POCK_BF16) {
    auto* y = static_cast<uint16_t*>(c.out(0).data);
    parallel_for(pool, n, tile, [&](size_t begin, size_t end) {
      alignas(64) float chunk[kBf16Chunk];
      for (size_t i = begin; i < end; i += kBf16Chunk) {
        const int64_t len = std::min<int64_t>(kBf16Chunk, static_cast<int64_t>(end - i));
        unary_loop(op, x + i, chunk, len, alpha, gamma);
        convert_to_bf16(chunk, len, y + i);  // as the Cast it replaces (cast_to_bf16 below)
      }
    });
    return;
  }
  float* y = c.out_data<float>(0);
  parallel_for(pool, n, tile, [&](size_t begin, size_t end) {
    unary_loop(op, x + begin, y + begin, static_cast<int64_t>(end - begin), alpha, gamma);
  });
}

template <UnaryOp kOp>
Status unary_kernel(const KernelCall& c) {
  run_unary(c, kOp);
  return Status::ok();
}

Status gelu_kernel(const KernelCall& c, const params::ActivationParams& p) {
  run_unary(c, p.tanh_gelu ? UnaryOp::kGeluTanh : UnaryOp::kGeluErf);
  return Status::ok();
}

template <UnaryOp kOp>
Status unary_with_params(const KernelCall& c, const params::ActivationParams& p) {
  run_unary(c, kOp, static_cast<float>(p.alpha), static_cast<float>(p.gamma));
  return Status::ok();
}

template <UnaryOp kOp>
KernelDef activation_def(const char* op) {
  return typed_kernel<params::ActivationParams, unary_with_params<kOp>>(op, DType::kF32, kCpuScore, unary_accepts);
}

// ---- Cast f32 -> bf16 --------------------------------------------------------------------------

// The compiler's one bf16 copy of an activation that bf16 GEMMs read
// (src/compiler/lowering/bf16_operands.hpp), rounded by convert_to_bf16 as the GEMMs rounded
// their f32 operands themselves (VCVTNEPS2BF16 where oneDNN runs them), so both give the same
// bits. Other casts run on ref.
bool cast_to_bf16_accepts(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]) && op.outputs[0].dtype == POCK_BF16 &&
         numel(op.inputs[0]) == numel(op.outputs[0]);
}

Status cast_to_bf16(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  auto* y = static_cast<uint16_t*>(c.out(0).data);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    convert_to_bf16(x + begin, static_cast<int64_t>(end - begin), y + begin);
  });
  return Status::ok();
}

}  // namespace

void register_elementwise(KernelTable& t) {
  t.add(f32_kernel("Add", binary_kernel<BinaryOp::kAdd>, binary_accepts));
  t.add(f32_kernel("Sub", binary_kernel<BinaryOp::kSub>, binary_accepts));
  t.add(f32_kernel("Mul", binary_kernel<BinaryOp::kMul>, binary_accepts));
  t.add(f32_kernel("Div", binary_kernel<BinaryOp::kDiv>, binary_accepts));
  t.add(f32_kernel("Relu", unary_kernel<UnaryOp::kRelu>, unary_accepts));
  t.add(f32_kernel("Relu6", unary_kernel<UnaryOp::kRelu6>, unary_accepts));
  t.add(f32_kernel("HardSwish", unary_kernel<UnaryOp::kHardSwish>, unary_accepts));
  t.add(f32_kernel("Sigmoid", unary_kernel<UnaryOp::kSigmoid>, unary_accepts));
  t.add(f32_kernel("Silu", unary_kernel<UnaryOp::kSilu>, unary_accepts));
  t.add(typed_kernel<params::ActivationParams, gelu_kernel>("Gelu", DType::kF32, kCpuScore, unary_accepts));
  t.add(activation_def<UnaryOp::kElu>("Elu"));
  t.add(activation_def<UnaryOp::kSelu>("Selu"));
  t.add(activation_def<UnaryOp::kCelu>("Celu"));
  t.add(activation_def<UnaryOp::kSoftplus>("Softplus"));
  t.add(activation_def<UnaryOp::kSoftsign>("Softsign"));
  t.add(activation_def<UnaryOp::kThresholdedRelu>("ThresholdedRelu"));
  t.add(activation_def<UnaryOp::kMish>("Mish"));
  t.add(f32_kernel("PRelu", binary_kernel<BinaryOp::kPRelu>, binary_accepts));
  t.add(f32_kernel("Cast", cast_to_bf16, cast_to_bf16_accepts));
}

}  // namespace pock::cpu
