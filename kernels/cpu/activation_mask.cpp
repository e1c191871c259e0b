// ClipMask and MaskGrad on the cpu backend: the 1-byte activation mask that the Relu, Relu6 and
// Clip gradients save in the forward pass, and dx = dy * mask in the backward. Plain loops under
// `#pragma omp simd`, compiled per x86 level (simd.hpp): f32 compares packed to bytes, and bytes
// widened to f32 factors. MaskGrad multiplies as ref does, so a NaN or infinite dy gives NaN
// where the mask is 0, exactly as ReluGrad / ClipGrad's dy * f'(x).
//
// With AVX-512 (chosen once at run time, as in layout.cpp) both take explicit loops instead: GCC
// vectorizes the byte <-> float loops at the byte's width, 16 bytes, so even its AVX-512 clone
// ran 2- and 4-float pieces with a chain of widening shuffles per element (MaskGrad ran at 2
// GFLOP/s on tensors that sit in cache). Here 16 elements are one compare into a mask register
// (k) and one masked move or byte store; the tails are masked loads and stores.
#include <bit>
#include <cmath>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define POCK_MASK_AVX512 1
#endif

#include "kernels/cpu/activation_mask_steps.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

// Below this many elements a loop is not worth handing to the pool (as the other elementwise ops).
constexpr size_t kMinParallelElements = size_t{1} << 15;

// The largest float <= d, and the smallest float >= d (infinite d stays infinite).
float float_at_or_below(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) > d) f = std::nextafter(f, -INFINITY);
  return f;
}
float float_at_or_above(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) < d) f = std::nextafter(f, INFINITY);
  return f;
}

bool is_byte_mask(const pock_tensor_desc& t) { return t.dtype == POCK_U8 || t.dtype == POCK_BOOL; }

// A NaN fails every compare: outside every range, as in ref. Strict and non-strict compares stay
// compares (not v >= the next float above lo): that would hinge on denormals, which a CPU set to
// treat them as zero compares differently.
POCK_SIMD_CLONES void range_mask(const float* v, uint8_t* mask, int64_t n, float lo, float hi, bool lo_strict,
                                 bool hi_strict) {
  auto loop = [&](auto above, auto below) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) mask[i] = static_cast<uint8_t>(above(v[i]) & below(v[i]));
  };
  auto gt = [lo](float x) { return x > lo; };
  auto ge = [lo](float x) { return x >= lo; };
  auto lt = [hi](float x) { return x < hi; };
  auto le = [hi](float x) { return x <= hi; };
  if (lo_strict) {
    hi_strict ? loop(gt, lt) : loop(gt, le);
  } else {
    hi_strict ? loop(ge, lt) : loop(ge, le);
  }
}

void clip_mask_loop(const float* v, uint8_t* mask, int64_t n, const MaskBounds& b) {
  range_mask(v, mask, n, b.lo, b.hi, b.lo_strict, b.hi_strict);
}

// The factor 1.0f or 0.0f built from its bits: written as `dy * float(mask != 0)`, GCC turns the
// multiplication by 1 into a branch and leaves the AVX2 and SSE clones scalar.
POCK_SIMD_CLONES void mask_grad_loop(const float* dy, const uint8_t* mask, float* dx, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t one_or_zero = (mask[i] != 0 ? 0xFFFFFFFFu : 0u) & 0x3F800000u;
    dx[i] = dy[i] * std::bit_cast<float>(one_or_zero);
  }
}

#ifdef POCK_MASK_AVX512
#define POCK_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

// mask[i] = lo (<|<=) v[i] (<|<=) hi, as bytes 0 / 1. Ordered compares: NaN fails both.
template <int kLoPredicate, int kHiPredicate>
POCK_AVX512_TARGET void range_mask_avx512(const float* v, uint8_t* mask, int64_t n, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m128i one = _mm_set1_epi8(1);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    const __mmask16 in = _mm512_cmp_ps_mask(x, vlo, kLoPredicate) & _mm512_cmp_ps_mask(x, vhi, kHiPredicate);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(mask + i), _mm_maskz_mov_epi8(in, one));
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(tail, v + i);
    const __mmask16 in = _mm512_cmp_ps_mask(x, vlo, kLoPredicate) & _mm512_cmp_ps_mask(x, vhi, kHiPredicate);
    _mm_mask_storeu_epi8(mask + i, tail, _mm_maskz_mov_epi8(in, one));
  }
}

// Calls run(lo, hi) with the bounds' compare predicates as integral constants (_CMP_GT_OQ or
// _CMP_GE_OQ, _CMP_LT_OQ or _CMP_LE_OQ), for the loops that take them as template arguments.
template <typename Run>
void with_predicates(const MaskBounds& b, const Run& run) {
  using Gt = std::integral_constant<int, _CMP_GT_OQ>;
  using Ge = std::integral_constant<int, _CMP_GE_OQ>;
  using Lt = std::integral_constant<int, _CMP_LT_OQ>;
  using Le = std::integral_constant<int, _CMP_LE_OQ>;
  if (b.lo_strict) {
    b.hi_strict ? run(Gt{}, Lt{}) : run(Gt{}, Le{});
  } else {
    b.hi_strict ? run(Ge{}, Lt{}) : run(Ge{}, Le{});
  }
}

void clip_mask_avx512(const float* v, uint8_t* mask, int64_t n, const MaskBounds& b) {
  with_predicates(b, [&](auto lo, auto hi) {
    range_mask_avx512<decltype(lo)::value, decltype(hi)::value>(v, mask, n, b.lo, b.hi);
  });
}

// dx = dy * (mask != 0 ? 1.0f : 0.0f): the factor is a masked move of 1.0f, the product a real
// multiplication (a NaN dy stays NaN under a zero mask, as in ref).
POCK_AVX512_TARGET void mask_grad_avx512(const float* dy, const uint8_t* mask, float* dx, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask + i));
    const __m512 factor = _mm512_maskz_mov_ps(_mm_test_epi8_mask(m, m), one);
    _mm512_storeu_ps(dx + i, _mm512_mul_ps(_mm512_loadu_ps(dy + i), factor));
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m128i m = _mm_maskz_loadu_epi8(tail, mask + i);
    const __m512 factor = _mm512_maskz_mov_ps(_mm_test_epi8_mask(m, m), one);
    _mm512_mask_storeu_ps(dx + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, dy + i), factor));
  }
}

#define POCK_AVX2_TARGET __attribute__((target("avx2,fma")))

// The same with AVX2, 32 elements a step: four compares of 8 floats packed to bytes (the packs
// interleave the two 128-bit lanes, which one permute puts back in order), and for the gradient
// 8 bytes widened to 8 lanes of 0 / -1 whose AND with 1.0f is the factor. GCC's own AVX2 clones
// of the loops above widen and narrow one byte at a time through shuffles.
// -1 where lo (<|<=) v[i] (<|<=) hi, else 0, for 8 floats.
template <int kLoPredicate, int kHiPredicate>
POCK_AVX2_TARGET inline __m256i in_range_avx2(const float* p, __m256 lo, __m256 hi) {
  const __m256 x = _mm256_loadu_ps(p);
  return _mm256_castps_si256(_mm256_and_ps(_mm256_cmp_ps(x, lo, kLoPredicate), _mm256_cmp_ps(x, hi, kHiPredicate)));
}

template <int kLoPredicate, int kHiPredicate>
POCK_AVX2_TARGET void range_mask_avx2(const float* v, uint8_t* mask, int64_t n, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256i one = _mm256_set1_epi8(1), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  constexpr auto in_range = in_range_avx2<kLoPredicate, kHiPredicate>;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i ab = _mm256_packs_epi32(in_range(v + i, vlo, vhi), in_range(v + i + 8, vlo, vhi));
    const __m256i cd = _mm256_packs_epi32(in_range(v + i + 16, vlo, vhi), in_range(v + i + 24, vlo, vhi));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(mask + i), _mm256_and_si256(bytes, one));
  }
  for (; i < n; ++i) {
    const float x = v[i];
    const bool above = kLoPredicate == _CMP_GT_OQ ? x > lo : x >= lo;
    const bool below = kHiPredicate == _CMP_LT_OQ ? x < hi : x <= hi;
    mask[i] = static_cast<uint8_t>(above & below);
  }
}

void clip_mask_avx2(const float* v, uint8_t* mask, int64_t n, const MaskBounds& b) {
  with_predicates(b, [&](auto lo, auto hi) {
    range_mask_avx2<decltype(lo)::value, decltype(hi)::value>(v, mask, n, b.lo, b.hi);
  });
}

POCK_AVX2_TARGET void mask_grad_avx2(const float* dy, const uint8_t* mask, float* dx, int64_t n) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i m = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mask + i)));
    const __m256 set = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_cmpeq_epi32(m, zero), _mm256_set1_epi32(-1)));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_and_ps(set, one)));
  }
  for (; i < n; ++i) dx[i] = dy[i] * (mask[i] != 0 ? 1.0f : 0.0f);
}

bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

ClipMaskLoop pick_clip_mask() {
#ifdef POCK_MASK_AVX512
  if (has_avx512()) return clip_mask_avx512;
  if (has_avx2()) return clip_mask_avx2;
#endif
  return clip_mask_loop;
}

MaskGradLoop pick_mask_grad() {
#ifdef POCK_MASK_AVX512
  if (has_avx512()) return mask_grad_avx512;
  if (has_avx2()) return mask_grad_avx2;
#endif
  return mask_grad_loop;
}

Status clip_mask(const KernelCall& c, const params::ActivationParams& p) {
  static const ClipMaskLoop loop = pick_clip_mask();
  return run_clip_mask(c, p, loop);
}
Status mask_grad(const KernelCall& c) {
  static const MaskGradLoop loop = pick_mask_grad();
  return run_mask_grad(c, loop);
}

KernelDef def(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore};
  d.accepts = accepts;
  return d;
}

}  // namespace

// For f32 v and a double bound d: v > d <=> v > (largest float <= d), v >= d <=> v >= (smallest
// float >= d), and likewise above.
MaskBounds clip_mask_bounds(const params::ActivationParams& p) {
  MaskBounds b;
  b.lo_strict = !p.inclusive && p.has_lo;
  b.hi_strict = !p.inclusive && p.has_hi;
  const double lo = p.lo, hi = p.hi;
  b.lo = b.lo_strict ? float_at_or_below(lo) : float_at_or_above(lo);
  b.hi = b.hi_strict ? float_at_or_above(hi) : float_at_or_below(hi);
  return b;
}

bool clip_mask_accepts(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]) && is_byte_mask(op.outputs[0]) &&
         numel(op.inputs[0]) == numel(op.outputs[0]);
}

bool mask_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &dy = op.inputs[0], &mask = op.inputs[1], &dx = op.outputs[0];
  return is_f32(dy) && is_byte_mask(mask) && is_f32(dx) && numel(mask) == numel(dy) && numel(dx) == numel(dy);
}

Status run_clip_mask(const KernelCall& c, const params::ActivationParams& p, ClipMaskLoop loop) {
  const MaskBounds b = clip_mask_bounds(p);
  const float* v = c.in_data<float>(0);
  uint8_t* mask = c.out_data<uint8_t>(0);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  // Tiles of whole 64-byte lines of the mask (the arena aligns tensors to 64 bytes): no two
  // threads write one cache line.
  parallel_for(pool, n, (balanced_tile(pool, n, kMinParallelElements / 4) + 63) & ~size_t{63},
               [&](size_t begin, size_t end) { loop(v + begin, mask + begin, static_cast<int64_t>(end - begin), b); });
  return Status::ok();
}

Status run_mask_grad(const KernelCall& c, MaskGradLoop loop) {
  const float* dy = c.in_data<float>(0);
  const uint8_t* mask = c.in_data<uint8_t>(1);
  float* dx = c.out_data<float>(0);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    loop(dy + begin, mask + begin, dx + begin, static_cast<int64_t>(end - begin));
  });
  return Status::ok();
}

void register_activation_mask(KernelTable& t) {
  t.add(typed_kernel<params::ActivationParams, clip_mask>("ClipMask", DType::kF32, kCpuScore, clip_mask_accepts));
  t.add(def("MaskGrad", mask_grad, mask_grad_accepts));
}

}  // namespace pock::cpu
