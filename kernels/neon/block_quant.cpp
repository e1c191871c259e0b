// LinearQ, LinearQInputGrad and the fused head LinearQCrossEntropy with compute "int8" (recipe
// frozen_matmul) on NEON integer dot products: the arithmetic kernels/ref/block_quant.cpp
// defines, equal to ref's integers, with the block scales applied to int32 sums once per 32
// values (f32 sums in another order than ref's double ones). Compute "f32" stays with the other
// backends (ref in an aarch64 build without OpenBLAS).
//
// The weight is rearranged once at prepare (Pack, shared through the KernelScope by every op
// over it) into groups of 8 output columns: per 32-value block, 16-byte vectors of 4 columns x
// 4 consecutive values, then the columns' scales (value = d q + m). q4 blocks keep two values a
// byte (vector j: values 4j..4j+3 in the low nibbles, 16+4j.. in the high ones) and q8 blocks
// their signed bytes, both with their f16 scales as stored (q4_0: m = -8 d implied; q8: m = 0),
// so the pack takes as many bits a weight as the file's blocks. Each activation row is quantized
// per 32-value block exactly as kernels/int8_rows.h does (a, scale s, and t = s sum(a)), so that
//   y[r, c] = bias[c] + sum_b d[c, b] s[r, b] (sum q a) + m[c, b] t[r, b].
// For the input gradient the pack holds the weight's columns requantized to q8 per 32 rows, as
// ref does (f32 d, m = 0), and the "activations" are dy's rows.
//
// The products: SDOT by element (vdotq_laneq_s32: one weight vector times 4 activation bytes
// broadcast from a register, 16 multiply-adds) where the CPU has the ARMv8.2 dot-product
// extension — compiled for it function by function, so the baseline build still runs on
// ARMv8.0, and chosen at run time (HWCAP_ASIMDDP) — and otherwise widening int16 products
// (vmull_s8 / vmlal_s8, pairwise-added into int32 with vpadalq_s16), which give the same sums.
// A tile is 4 rows (2 without SDOT) x 8 columns; groups of columns split over the cpu backend's
// thread pool (one thread in a build without pthreadpool).
#include <arm_neon.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#include "ir/block_format.hpp"
#include "ir/float16.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/int8_rows.h"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_math.hpp"
#include "kernels/neon/neon_util.hpp"
#include "kernels/params/block_quant.hpp"
#include "kernels/params/training.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/mapped_file.hpp"

// The SDOT intrinsics inside functions compiled for dotprod: GCC's arm_neon.h defines them for
// any target (under its own target pragma), as recent clang's does; older clang (checked: 14)
// only when the whole file targets dotprod (-march=armv8.2-a+dotprod), else the int16 path only.
#if defined(__ARM_FEATURE_DOTPROD) || (defined(__GNUC__) && !defined(__clang__)) || \
    (defined(__clang__) && __clang_major__ >= 17)
#define POCK_NEON_SDOT 1
#if defined(__clang__)
#define POCK_DOTPROD __attribute__((target("dotprod")))
#else
#define POCK_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#endif

namespace pock::neon {
namespace {

constexpr int64_t kCols = 8;  // output columns per group: two vectors of 4

// What a pack's blocks hold after their integers (128 bytes of nibbles or 256 of int8):
//   kQ8Rows: d[8] f16 (m = 0)        kQ4_0: d[8] f16 (m = -8 d)
//   kQ8Columns: d[8] f32 (m = 0)     kQ4_1: d[8] f16, then m[8] f16
enum class Layout { kQ8Rows, kQ8Columns, kQ4_0, kQ4_1 };

constexpr bool nibbles(Layout l) { return l == Layout::kQ4_0 || l == Layout::kQ4_1; }
constexpr int64_t int_bytes(Layout l) { return nibbles(l) ? 128 : 256; }
constexpr int64_t block_bytes(Layout l) { return int_bytes(l) + (l == Layout::kQ8Rows || l == Layout::kQ4_0 ? 16 : 32); }

struct Pack {
  int64_t cols = 0;    // output columns (padded to groups of 8 in the data: q = d = m = 0)
  int64_t blocks = 0;  // 32-value blocks along the reduction
  Layout layout = Layout::kQ8Rows;
  AlignedBuffer data;  // [group][block]: the integers, then the scales
  int64_t groups() const { return (cols + kCols - 1) / kCols; }
  int64_t block_bytes() const { return neon::block_bytes(layout); }
};

// The ARMv8.2 dot-product instructions (SDOT) on this CPU.
bool cpu_has_sdot() {
#if defined(POCK_NEON_SDOT) && defined(__ARM_FEATURE_DOTPROD)
  return true;
#elif defined(POCK_NEON_SDOT) && defined(__linux__)
  static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return has;
#elif defined(POCK_NEON_SDOT) && defined(__APPLE__)
  static const bool has = [] {
    int value = 0;
    size_t size = sizeof(value);
    return sysctlbyname("hw.optional.arm.FEAT_DotProd", &value, &size, nullptr, 0) == 0 && value != 0;
  }();
  return has;
#else
  return false;
#endif
}

std::shared_ptr<Pack> new_pack(int64_t cols, int64_t blocks, Layout layout) {
  auto pack = std::shared_ptr<Pack>(new (std::nothrow) Pack);
  if (!pack) return nullptr;
  pack->cols = cols;
  pack->blocks = blocks;
  pack->layout = layout;
  const size_t bytes = static_cast<size_t>(pack->groups() * blocks * pack->block_bytes());
  if (!pack->data.allocate(std::max<size_t>(bytes, 64), "int8 weight pack").is_ok()) return nullptr;
  std::memset(pack->data.data(), 0, bytes);
  return pack;
}

// Column c's integers q[32] and value = d q + m, into block `b` of its group (d and m exact in
// f16 where the layout keeps them so: they are the file's).
void put_column(Pack& pack, int64_t c, int64_t b, const int8_t* q, float d, float m) {
  uint8_t* block = pack.data.data() + ((c / kCols) * pack.blocks + b) * pack.block_bytes();
  const int64_t cc = c % kCols, half = cc / 4, lane = cc % 4;
  if (nibbles(pack.layout)) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t t = 0; t < 4; ++t) {
        block[(2 * j + half) * 16 + 4 * lane + t] = static_cast<uint8_t>((q[4 * j + t] & 15) | (q[16 + 4 * j + t] << 4));
      }
    }
  } else {
    for (int64_t j = 0; j < 8; ++j) std::memcpy(block + (2 * j + half) * 16 + 4 * lane, q + 4 * j, 4);
  }
  uint8_t* scales = block + int_bytes(pack.layout);
  if (pack.layout == Layout::kQ8Columns) {
    std::memcpy(scales + 4 * cc, &d, 4);
    return;
  }
  const uint16_t dh = float_to_half(d), mh = float_to_half(m);
  std::memcpy(scales + 2 * cc, &dh, 2);
  if (pack.layout == Layout::kQ4_1) std::memcpy(scales + 2 * (kCols + cc), &mh, 2);
}

// For y = x Wᵀ: W's n rows of `format` blocks (q8_0, q4_0, q4_1), k values each.
std::shared_ptr<Pack> pack_rows(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                pthreadpool_t pool) {
  const Layout layout = format == BlockFormat::kQ8_0 ? Layout::kQ8Rows : format == BlockFormat::kQ4_0 ? Layout::kQ4_0 : Layout::kQ4_1;
  auto pack = new_pack(n, k / 32, layout);
  if (!pack) return nullptr;
  const int64_t block_bytes = block_layout(format).bytes;
  cpu::parallel_for(pool, static_cast<size_t>(n), 64, [&](size_t begin, size_t end) {
    int8_t q[32];
    for (size_t j = begin; j < end; ++j) {
      for (int64_t b = 0; b < k / 32; ++b) {
        float d = 0.0f, m = 0.0f;
        block_int8_view(format, w + static_cast<int64_t>(j) * row_bytes + b * block_bytes, q, &d, &m);
        put_column(*pack, static_cast<int64_t>(j), b, q, d, m);
      }
    }
  });
  return pack;
}

// For dx = dy W: W's k columns, each requantized to q8 per 32 of its n values as ref does
// (the decoded rows, then kernels/int8_rows.h over each column's 32 values).
std::shared_ptr<Pack> pack_columns(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                   pthreadpool_t pool) {
  auto pack = new_pack(k, n / 32, Layout::kQ8Columns);
  if (!pack) return nullptr;
  const int64_t row_blocks = k / block_layout(format).values;
  std::atomic<bool> ok{true};
  cpu::parallel_for(pool, static_cast<size_t>(n / 32), 1, [&](size_t begin, size_t end) {
    std::vector<float> rows;
    try {
      rows.resize(static_cast<size_t>(32 * k));
    } catch (const std::bad_alloc&) {
      ok = false;
      return;
    }
    float column[32];
    int8_t q[32];
    for (size_t ch = begin; ch < end; ++ch) {
      for (int64_t i = 0; i < 32; ++i) {
        decode_blocks(format, w + (static_cast<int64_t>(ch) * 32 + i) * row_bytes, row_blocks, rows.data() + i * k);
      }
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t i = 0; i < 32; ++i) column[i] = rows[static_cast<size_t>(i * k + p)];
        const float scale = pock_quantize_row_i8(column, 32, q);
        put_column(*pack, p, static_cast<int64_t>(ch), q, scale, 0.0f);
      }
    }
  });
  return ok.load() ? pack : nullptr;
}

// pock_quantize_row_i8 over one block of 32 values with the same IEEE operations, four lanes at
// a time, so that the integers equal ref's: q = trunc(v * (127 / amax) +- 0.5) after clamping to
// +-127. Also t = s * sum(q).
void quantize_block(const float* x, int8_t* q, float* s, float* t) {
  float32x4_t v[8];
  float32x4_t top = vdupq_n_f32(0.0f);
  uint32x4_t finite = vdupq_n_u32(~0u);
  const float32x4_t big = vdupq_n_f32(3.402823466e38f);
  for (int i = 0; i < 8; ++i) {
    v[i] = vld1q_f32(x + 4 * i);
    const float32x4_t a = vabsq_f32(v[i]);
    finite = vandq_u32(finite, vcleq_f32(a, big));  // false for NaN and Inf
    top = vmaxq_f32(top, a);
  }
  const float amax = vmaxvq_f32(top);
  if (vminvq_u32(finite) == 0 || amax == 0.0f) {
    std::memset(q, 0, 32);
    *s = vminvq_u32(finite) == 0 ? __builtin_nanf("") : 0.0f;
    *t = *s;
    return;
  }
  const float32x4_t inv = vdupq_n_f32(127.0f / amax);
  const float32x4_t hi = vdupq_n_f32(127.0f), lo = vdupq_n_f32(-127.0f), half = vdupq_n_f32(0.5f);
  int32x4_t sum = vdupq_n_s32(0);
  int32x4_t r[8];
  for (int i = 0; i < 8; ++i) {
    const float32x4_t u = vminq_f32(vmaxq_f32(vmulq_f32(v[i], inv), lo), hi);
    const int32x4_t up = vcvtq_s32_f32(vaddq_f32(u, half));
    const int32x4_t down = vnegq_s32(vcvtq_s32_f32(vsubq_f32(half, u)));
    r[i] = vbslq_s32(vcltq_f32(u, vdupq_n_f32(0.0f)), down, up);
    sum = vaddq_s32(sum, r[i]);
  }
  for (int i = 0; i < 2; ++i) {
    const int16x8_t a = vcombine_s16(vmovn_s32(r[4 * i]), vmovn_s32(r[4 * i + 1]));
    const int16x8_t b = vcombine_s16(vmovn_s32(r[4 * i + 2]), vmovn_s32(r[4 * i + 3]));
    vst1q_s8(q + 16 * i, vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
  }
  *s = amax / 127.0f;
  *t = *s * static_cast<float>(vaddvq_s32(sum));
}

// Rows [m, len] (len % 32 == 0) quantized per 32-value block: a [m, len], s and t [m, len / 32].
void quantize_rows(const float* x, int64_t m, int64_t len, int8_t* a, float* s, float* t, pthreadpool_t pool) {
  cpu::parallel_for(pool, static_cast<size_t>(m * (len / 32)), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) quantize_block(x + i * 32, a + i * 32, s + i, t + i);
  });
}

// The weight vectors of one block for chunk pair j (values 4j..4j+3 and 16+4j..16+4j+3) of both
// halves of the group: w[h][0] for the first chunk, w[h][1] for the second.
template <Layout L>
inline __attribute__((always_inline)) void load_chunk_pair(const uint8_t* block, int j, int8x16_t w[2][2]) {
#pragma GCC unroll 4
  for (int h = 0; h < 2; ++h) {
    if constexpr (nibbles(L)) {
      const uint8x16_t v = vld1q_u8(block + (2 * j + h) * 16);
      w[h][0] = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(15)));
      w[h][1] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
    } else {
      w[h][0] = vld1q_s8(reinterpret_cast<const int8_t*>(block) + (2 * j + h) * 16);
      w[h][1] = vld1q_s8(reinterpret_cast<const int8_t*>(block) + (2 * (j + 4) + h) * 16);
    }
  }
}

// Eight f16 values as two f32 vectors: exact, subnormal halves included (FPCR.FZ, set during a
// run, does not apply to a conversion's half-precision input; a test checks it).
inline __attribute__((always_inline)) void load_halves(const uint8_t* p, float32x4_t out[2]) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(reinterpret_cast<const uint16_t*>(p)));
  out[0] = vcvt_f32_f16(vget_low_f16(h));
  out[1] = vcvt_high_f32_f16(h);
}

// acc[r][h] += dot[r][h] d[h] s[r] + m[h] t[r]: one block's scales on R rows x 8 columns.
template <Layout L, int R>
inline __attribute__((always_inline)) void add_block(float32x4_t acc[][2], const int32x4_t dot[][2], const uint8_t* block,
                                                     const float* s, const float* t, int64_t lds) {
  const uint8_t* scales = block + int_bytes(L);
  float32x4_t d[2], m[2];
  if constexpr (L == Layout::kQ8Columns) {
    d[0] = vld1q_f32(reinterpret_cast<const float*>(scales));
    d[1] = vld1q_f32(reinterpret_cast<const float*>(scales) + 4);
  } else {
    load_halves(scales, d);
  }
  if constexpr (L == Layout::kQ4_1) load_halves(scales + 2 * kCols, m);
  if constexpr (L == Layout::kQ4_0) m[0] = vmulq_n_f32(d[0], -8.0f), m[1] = vmulq_n_f32(d[1], -8.0f);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int h = 0; h < 2; ++h) {
      acc[r][h] = vfmaq_f32(acc[r][h], vcvtq_f32_s32(dot[r][h]), vmulq_n_f32(d[h], s[r * lds]));
      if constexpr (nibbles(L)) acc[r][h] = vfmaq_n_f32(acc[r][h], m[h], t[r * lds]);
    }
  }
}

// The bias of a group (or zero) in both halves' accumulators, and the results out: `width` <= 8
// columns of R rows.
template <int R>
inline __attribute__((always_inline)) void init_rows(float32x4_t acc[][2], const float* bias, int64_t width) {
  float b[kCols] = {};
  if (bias) std::memcpy(b, bias, static_cast<size_t>(width) * sizeof(float));
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    acc[r][0] = vld1q_f32(b);
    acc[r][1] = vld1q_f32(b + 4);
  }
}

template <int R>
inline __attribute__((always_inline)) void store_rows(const float32x4_t acc[][2], float* y, int64_t ldy, int64_t width) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if (width == kCols) {
      vst1q_f32(y + r * ldy, acc[r][0]);
      vst1q_f32(y + r * ldy + 4, acc[r][1]);
    } else {
      float out[kCols];
      vst1q_f32(out, acc[r][0]);
      vst1q_f32(out + 4, acc[r][1]);
      std::memcpy(y + r * ldy, out, static_cast<size_t>(width) * sizeof(float));
    }
  }
}

// Between chunk pairs: the next loads from `block` wait for this (empty) statement. Without it
// GCC hoists all of a block's weight loads to its top, and a 4 x 8 tile's accumulators spill.
inline __attribute__((always_inline)) void loads_stay_here(const uint8_t*& block) { asm volatile("" : "+r"(block)); }

// Where the kernel is told which rows to take: R rows of a (stride lda) from block 0, their s
// and t (stride lds), the group's blocks, and where y goes.
struct TileArgs {
  const uint8_t* group;
  int64_t blocks, block_bytes;
  const int8_t* a;
  int64_t lda;
  const float* s;
  const float* t;
  int64_t lds;
  const float* bias;
  float* y;
  int64_t ldy, width;
};

#ifdef POCK_NEON_SDOT

// dot[r][h] += w[h][0] . (4 bytes J of lo[r]) + w[h][1] . (4 bytes J of hi[r]), per column.
template <int J, int R>
POCK_DOTPROD inline __attribute__((always_inline)) void sdot_pair(int32x4_t dot[][2], const int8x16_t w[2][2],
                                                                  const int8x16_t* lo, const int8x16_t* hi) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int h = 0; h < 2; ++h) {
      dot[r][h] = vdotq_laneq_s32(dot[r][h], w[h][0], lo[r], J);
      dot[r][h] = vdotq_laneq_s32(dot[r][h], w[h][1], hi[r], J);
    }
  }
}

template <Layout L, int R>
POCK_DOTPROD void tile_sdot(const TileArgs& g) {
  float32x4_t acc[R][2];
  init_rows<R>(acc, g.bias, g.width);
  const uint8_t* block = g.group;
  for (int64_t b = 0; b < g.blocks; ++b, block += g.block_bytes) {
    int8x16_t lo[R], hi[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      lo[r] = vld1q_s8(g.a + r * g.lda + 32 * b);
      hi[r] = vld1q_s8(g.a + r * g.lda + 32 * b + 16);
    }
    int32x4_t dot[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) dot[r][0] = dot[r][1] = vdupq_n_s32(0);
    int8x16_t w[2][2];
    load_chunk_pair<L>(block, 0, w);
    sdot_pair<0, R>(dot, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 1, w);
    sdot_pair<1, R>(dot, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 2, w);
    sdot_pair<2, R>(dot, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 3, w);
    sdot_pair<3, R>(dot, w, lo, hi);
    add_block<L, R>(acc, dot, block, g.s + b, g.t + b, g.lds);
  }
  store_rows<R>(acc, g.y, g.ldy, g.width);
}

#endif  // POCK_NEON_SDOT

// Without SDOT: w[h][0] times 4 bytes J of lo[r] broadcast, plus w[h][1] times those of hi[r],
// as int16 products (two products |q a| <= 128 * 127 fit in int16), pairwise-added into int32
// lanes: pairs[r][h][0] holds columns 0-1 of the half (two partial sums each), [1] columns 2-3.
template <int J, int R>
inline __attribute__((always_inline)) void mull_pair(int32x4_t pairs[][2][2], const int8x16_t w[2][2], const int8x16_t* lo,
                                                     const int8x16_t* hi) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const int8x16_t al = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(lo[r]), J));
    const int8x16_t ah = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(hi[r]), J));
#pragma GCC unroll 4
    for (int h = 0; h < 2; ++h) {
      const int16x8_t p0 = vmlal_s8(vmull_s8(vget_low_s8(w[h][0]), vget_low_s8(al)), vget_low_s8(w[h][1]), vget_low_s8(ah));
      const int16x8_t p1 = vmlal_high_s8(vmull_high_s8(w[h][0], al), w[h][1], ah);
      pairs[r][h][0] = vpadalq_s16(pairs[r][h][0], p0);
      pairs[r][h][1] = vpadalq_s16(pairs[r][h][1], p1);
    }
  }
}

template <Layout L, int R>
void tile_mull(const TileArgs& g) {
  float32x4_t acc[R][2];
  init_rows<R>(acc, g.bias, g.width);
  const uint8_t* block = g.group;
  for (int64_t b = 0; b < g.blocks; ++b, block += g.block_bytes) {
    int8x16_t lo[R], hi[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      lo[r] = vld1q_s8(g.a + r * g.lda + 32 * b);
      hi[r] = vld1q_s8(g.a + r * g.lda + 32 * b + 16);
    }
    int32x4_t pairs[R][2][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) pairs[r][0][0] = pairs[r][0][1] = pairs[r][1][0] = pairs[r][1][1] = vdupq_n_s32(0);
    int8x16_t w[2][2];
    load_chunk_pair<L>(block, 0, w);
    mull_pair<0, R>(pairs, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 1, w);
    mull_pair<1, R>(pairs, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 2, w);
    mull_pair<2, R>(pairs, w, lo, hi);
    loads_stay_here(block);
    load_chunk_pair<L>(block, 3, w);
    mull_pair<3, R>(pairs, w, lo, hi);
    int32x4_t dot[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int h = 0; h < 2; ++h) dot[r][h] = vpaddq_s32(pairs[r][h][0], pairs[r][h][1]);
    }
    add_block<L, R>(acc, dot, block, g.s + b, g.t + b, g.lds);
  }
  store_rows<R>(acc, g.y, g.ldy, g.width);
}

template <bool kSdot, Layout L, int R>
void tile(const TileArgs& g) {
#ifdef POCK_NEON_SDOT
  if constexpr (kSdot) {
    tile_sdot<L, R>(g);
    return;
  }
#endif
  tile_mull<L, R>(g);
}

// Every row of a against group g of the pack: tiles of 4 rows (2 without SDOT), then the rest.
template <bool kSdot, Layout L>
void rows_of_group(const Pack& pack, int64_t g, const int8_t* a, const float* s, const float* t, int64_t m, const float* bias,
                   float* y, int64_t ldy) {
  constexpr int64_t kRows = kSdot ? 4 : 2;
  const int64_t k = pack.blocks * 32, c0 = g * kCols;
  TileArgs args{pack.data.data() + g * pack.blocks * pack.block_bytes(), pack.blocks, pack.block_bytes(),
                nullptr, k, nullptr, nullptr, pack.blocks, bias ? bias + c0 : nullptr, nullptr, ldy,
                std::min<int64_t>(kCols, pack.cols - c0)};
  auto at = [&](int64_t r) {
    args.a = a + r * k;
    args.s = s + r * pack.blocks;
    args.t = t + r * pack.blocks;
    args.y = y + r * ldy + c0;
  };
  int64_t r = 0;
  for (; r + kRows <= m; r += kRows) {
    at(r);
    tile<kSdot, L, kRows>(args);
  }
  at(r);
  if (m - r == 1) tile<kSdot, L, 1>(args);
  if constexpr (kRows == 4) {
    if (m - r == 2) tile<kSdot, L, 2>(args);
    if (m - r == 3) tile<kSdot, L, 3>(args);
  }
}

// y [m, pack.cols] (row stride ldy) = bias + the products above; bias may be null.
void int8_gemm(const Pack& pack, bool sdot, const int8_t* a, const float* s, const float* t, int64_t m, const float* bias,
               float* y, int64_t ldy, pthreadpool_t pool) {
  const size_t groups = static_cast<size_t>(pack.groups());
  auto run = [&](auto sdot_tag, auto layout_tag) {
    cpu::parallel_for(pool, groups, cpu::balanced_tile(pool, groups, 1), [&](size_t begin, size_t end) {
      for (size_t g = begin; g < end; ++g) {
        rows_of_group<decltype(sdot_tag)::value, decltype(layout_tag)::value>(pack, static_cast<int64_t>(g), a, s, t, m, bias, y,
                                                                                ldy);
      }
    });
  };
  auto with_layout = [&](auto sdot_tag) {
    switch (pack.layout) {
      case Layout::kQ8Rows: run(sdot_tag, std::integral_constant<Layout, Layout::kQ8Rows>{}); break;
      case Layout::kQ8Columns: run(sdot_tag, std::integral_constant<Layout, Layout::kQ8Columns>{}); break;
      case Layout::kQ4_0: run(sdot_tag, std::integral_constant<Layout, Layout::kQ4_0>{}); break;
      case Layout::kQ4_1: run(sdot_tag, std::integral_constant<Layout, Layout::kQ4_1>{}); break;
    }
  };
#ifdef POCK_NEON_SDOT
  if (sdot) {
    with_layout(std::true_type{});
    return;
  }
#endif
  (void)sdot;
  with_layout(std::false_type{});
}

constexpr int64_t kHeadRows = 32;  // LinearQCrossEntropy's rows at a time

struct Plan {
  params::BlockQuantParams p;
  int64_t m = 0, n = 0;  // rows of x (or dy) and of the weight
  bool sdot = false;
  KernelScope* scope = nullptr;
  pthreadpool_t pool = nullptr;
  std::shared_ptr<Pack> pack;     // the weight's rows (LinearQ) or requantized columns (the input gradient)
  std::shared_ptr<Pack> columns;  // LinearQCrossEntropy with a gradient: the pack for dx
};

// The quantized activations in the scope's scratch: a [values] int8 (16-byte rounded), s, t.
struct Int8Rows {
  int8_t* a;
  float* s;
  float* t;
};

size_t int8_scratch_bytes(size_t values) { return (values + 15) / 16 * 16 + 2 * (values / 32) * sizeof(float); }

Int8Rows int8_rows(const Plan& plan, size_t values, size_t skip_bytes = 0) {
  uint8_t* base = plan.scope->scratch() + skip_bytes;
  auto* s = reinterpret_cast<float*>(base + (values + 15) / 16 * 16);
  return {reinterpret_cast<int8_t*>(base), s, s + values / 32};
}

int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}

// Compute int8 over int8-viewable blocks; f32 falls to another backend. The weight's data is not
// asked for: the compiler chooses backends from descriptions without data (prepare refuses a
// weight that is not a constant).
bool accepts(const pock_op_desc& op) {
  if (op.num_inputs < 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1];
  if (x.dtype != POCK_F32 || x.rank < 1 || w.dtype != POCK_U8 || w.rank != 2) return false;
  params::BlockQuantParams p;
  return params::parse(op, &p).is_ok() && p.int8;
}

// The weight's pack, built by the first op over it and shared by every other.
Status shared_pack(const pock_op_desc& op, const Plan& plan, bool columns, std::shared_ptr<Pack>* out) {
  if (!op.inputs[1].data) {
    return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': compute int8 needs a constant weight");
  }
  const std::string key = std::string(columns ? "int8 columns " : "int8 rows ") +
                          std::to_string(reinterpret_cast<uintptr_t>(op.inputs[1].data)) + " " +
                          block_format_name(plan.p.format) + " " + std::to_string(plan.n) + "x" +
                          std::to_string(plan.p.in_features);
  *out = std::static_pointer_cast<Pack>(plan.scope->find_shared(key));
  if (*out) return Status::ok();
  const auto* w = static_cast<const uint8_t*>(op.inputs[1].data);
  *out = columns ? pack_columns(plan.p.format, w, plan.n, plan.p.in_features, plan.p.row_bytes, plan.pool)
                 : pack_rows(plan.p.format, w, plan.n, plan.p.in_features, plan.p.row_bytes, plan.pool);
  if (!*out || !plan.scope->put_shared(key, *out)) {
    return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for the int8 weight");
  }
  return Status::ok();
}

Status prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  auto plan = std::unique_ptr<Plan>(new (std::nothrow) Plan);
  if (!plan) return Status(Code::kOutOfMemory, std::string(op.op) + " plan");
  POCK_RETURN_IF_ERROR(params::parse(op, &plan->p));
  plan->m = leading_rows(op.inputs[0]);
  plan->n = op.inputs[1].dims[0];
  plan->sdot = cpu_has_sdot();
  plan->scope = &scope;
  plan->pool = cpu::thread_pool_for(op.num_threads);
  if (std::string_view(op.op) == "LinearQCrossEntropy") {
    // Both packs; a chunk of logits, then the int8 scratch for a chunk of x or of the logits.
    POCK_RETURN_IF_ERROR(shared_pack(op, *plan, false, &plan->pack));
    if (op.num_outputs > 1) POCK_RETURN_IF_ERROR(shared_pack(op, *plan, true, &plan->columns));
    const size_t chunk = static_cast<size_t>(std::min(plan->m, kHeadRows));
    const size_t values = chunk * static_cast<size_t>(std::max(plan->n, plan->p.in_features));
    POCK_RETURN_IF_ERROR(scope.reserve_scratch(chunk * static_cast<size_t>(plan->n) * sizeof(float) + int8_scratch_bytes(values),
                                               "LinearQCrossEntropy logits"));
    *state = plan.release();
    return Status::ok();
  }
  const bool input_grad = std::string_view(op.op) == "LinearQInputGrad";
  POCK_RETURN_IF_ERROR(shared_pack(op, *plan, input_grad, &plan->pack));
  const size_t values = static_cast<size_t>(plan->m * (input_grad ? plan->n : plan->p.in_features));
  POCK_RETURN_IF_ERROR(scope.reserve_scratch(int8_scratch_bytes(values), "int8 activations"));
  *state = plan.release();
  return Status::ok();
}

void release(void* state) { delete static_cast<Plan*>(state); }

// y = x dequant(w)ᵀ + bias, on int8 products.
Status linear_q(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, k = plan.p.in_features;
  if (m == 0 || plan.n == 0) return Status::ok();
  const Int8Rows q = int8_rows(plan, static_cast<size_t>(m * k));
  quantize_rows(c.in_data<float>(0), m, k, q.a, q.s, q.t, plan.pool);
  int8_gemm(*plan.pack, plan.sdot, q.a, q.s, q.t, m, c.has_input(2) ? c.in_data<float>(2) : nullptr, c.out_data<float>(0),
            plan.n, plan.pool);
  return Status::ok();
}

// dx = dy dequant(w): dy's rows against the weight's requantized columns.
Status linear_q_input_grad(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, n = plan.n;
  if (m == 0) return Status::ok();
  const Int8Rows q = int8_rows(plan, static_cast<size_t>(m * n));
  quantize_rows(c.in_data<float>(0), m, n, q.a, q.s, q.t, plan.pool);
  int8_gemm(*plan.pack, plan.sdot, q.a, q.s, q.t, m, nullptr, c.out_data<float>(0), plan.p.in_features, plan.pool);
  return Status::ok();
}

// Per row of logits z (n classes): its cross-entropy, and z replaced by the loss gradient
// (softmax - (1 - e) onehot - e / n) * scale, as kernels/cpu's twin (f32 lanes; ref sums in double).
double cross_entropy_row(float* z, int64_t n, int64_t label, double eps, float scale) {
  float32x4_t top = vdupq_n_f32(z[0]);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) top = vmaxq_f32(top, vld1q_f32(z + j));
  float mx = vmaxvq_f32(top);
  for (; j < n; ++j) mx = z[j] > mx ? z[j] : mx;
  const float32x4_t vmx = vdupq_n_f32(mx);
  float32x4_t sum = vdupq_n_f32(0.0f), total = vdupq_n_f32(0.0f);
  for (j = 0; j + 4 <= n; j += 4) {
    const float32x4_t v = vld1q_f32(z + j);
    sum = vaddq_f32(sum, neon::exp(vsubq_f32(v, vmx)));
    total = vaddq_f32(total, v);
  }
  float rest_sum = 0.0f, rest_total = 0.0f;
  if (j < n) {
    float e[4];
    vst1q_f32(e, neon::exp(vsubq_f32(load_partial(z + j, n - j), vmx)));
    for (int64_t i = 0; i < n - j; ++i) {
      rest_sum += e[i];
      rest_total += z[j + i];
    }
  }
  const float lse = mx + std::log(vaddvq_f32(sum) + rest_sum);
  const double loss = lse - (1.0 - eps) * z[label] - eps * static_cast<double>(vaddvq_f32(total) + rest_total) / static_cast<double>(n);
  const float32x4_t vlse = vdupq_n_f32(lse), floor = vdupq_n_f32(static_cast<float>(eps / static_cast<double>(n)));
  map(z, z, n, [&](float32x4_t v) { return vmulq_n_f32(vsubq_f32(neon::exp(vsubq_f32(v, vlse)), floor), scale); });
  z[label] -= static_cast<float>(1.0 - eps) * scale;
  return loss;
}

// SoftmaxCrossEntropy(LinearQ(x, w), labels) and its x gradient (dloss = 1), kHeadRows rows at a
// time: the logits of a chunk, their loss and gradient in place, then dx of the chunk.
Status linear_q_cross_entropy(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, n = plan.n, k = plan.p.in_features;
  const int64_t* labels = c.in_data<int64_t>(2);
  const int64_t ignore = plan.p.ignore_index;
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, m, n, ignore, &counted));
  const float* x = c.in_data<float>(0);
  float* dx = plan.columns ? c.out_data<float>(1) : nullptr;
  const size_t chunk_floats = static_cast<size_t>(std::min(m, kHeadRows) * n);
  float* z = reinterpret_cast<float*>(plan.scope->scratch());
  const Int8Rows q = int8_rows(plan, static_cast<size_t>(std::min(m, kHeadRows) * std::max(n, k)), chunk_floats * sizeof(float));
  const float scale = counted ? 1.0f / static_cast<float>(counted) : 0.0f;
  double total = 0.0;
  double row_loss[kHeadRows];
  for (int64_t r0 = 0; r0 < m; r0 += kHeadRows) {
    const int64_t rows = std::min(kHeadRows, m - r0);
    quantize_rows(x + r0 * k, rows, k, q.a, q.s, q.t, plan.pool);
    int8_gemm(*plan.pack, plan.sdot, q.a, q.s, q.t, rows, nullptr, z, n, plan.pool);
    cpu::parallel_for(plan.pool, static_cast<size_t>(rows), 1, [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) {
        float* zr = z + static_cast<int64_t>(r) * n;
        const int64_t label = labels[r0 + static_cast<int64_t>(r)];
        row_loss[r] = 0.0;
        if (label == ignore) {
          std::fill(zr, zr + n, 0.0f);
        } else {
          row_loss[r] = cross_entropy_row(zr, n, label, plan.p.label_smoothing, scale);
        }
      }
    });
    for (int64_t r = 0; r < rows; ++r) total += row_loss[r];
    if (!dx) continue;
    quantize_rows(z, rows, n, q.a, q.s, q.t, plan.pool);
    int8_gemm(*plan.columns, plan.sdot, q.a, q.s, q.t, rows, nullptr, dx + r0 * k, k, plan.pool);
  }
  *c.out_data<float>(0) = counted ? static_cast<float>(total / static_cast<double>(counted)) : 0.0f;
  return Status::ok();
}

// The fused head: int8 only (the compiler fuses int8 heads), labels i64, with or without dx.
bool head_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 3 || op.num_outputs < 1 || op.num_outputs > 2 || op.inputs[2].dtype != POCK_I64) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1];
  if (x.dtype != POCK_F32 || x.rank < 1 || w.dtype != POCK_U8 || w.rank != 2) return false;
  params::BlockQuantParams p;
  return params::parse(op, &p).is_ok() && p.int8;
}

KernelDef block_quant_def(const char* op, KernelFn run) {
  KernelDef d{op, DType::kF32, run, kNeonScore, nullptr, release};
  d.prepare_scoped = prepare;
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_block_quant(KernelTable& t) {
  t.add(block_quant_def("LinearQ", linear_q));
  t.add(block_quant_def("LinearQInputGrad", linear_q_input_grad));
  KernelDef head = block_quant_def("LinearQCrossEntropy", linear_q_cross_entropy);
  head.accepts = head_accepts;
  t.add(head);
}

}  // namespace pock::neon
