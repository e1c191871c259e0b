#include "kernels/cpu/block_int8_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <new>
#include <vector>

#include "ir/float16.hpp"
#include "kernels/int8_rows.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define POCK_INT8_X86 1
#define POCK_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512dq")))
#define POCK_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace pock::cpu {
namespace {

constexpr int64_t kRowTile = 8;  // rows of a per micro-kernel call: 8 int32 + 8 f32 accumulators

std::shared_ptr<Int8Pack> new_pack(int64_t cols, int64_t blocks, bool nibbles, bool half_d, int min_from_d) {
  auto pack = std::shared_ptr<Int8Pack>(new (std::nothrow) Int8Pack);
  if (!pack) return nullptr;
  pack->cols = cols;
  pack->blocks = blocks;
  pack->nibbles = nibbles;
  pack->half_d = half_d;
  pack->min_from_d = min_from_d;
  const size_t bytes = static_cast<size_t>(pack->groups() * blocks * pack->block_bytes());
  if (!pack->data.allocate(bytes, "int8 weight pack").is_ok()) return nullptr;
  std::memset(pack->data.data(), 0, bytes);  // padding columns: u = d = m = 0
  return pack;
}

// Column c's integers u[32] and value = d u + m, into block `b` of its group (m only where the
// pack stores it; d as f16 where the pack does, which must be exact).
void put_column(Int8Pack& pack, int64_t c, int64_t b, const uint8_t* u, float d, float m) {
  uint8_t* block = pack.data.data() + ((c / 16) * pack.blocks + b) * pack.block_bytes();
  const int64_t cc = c % 16;
  if (pack.nibbles) {  // vector j: values 4j..4j+3 in the low nibbles, 16+4j.. in the high ones
    for (int j = 0; j < 4; ++j) {
      for (int t = 0; t < 4; ++t) block[j * 64 + cc * 4 + t] = static_cast<uint8_t>(u[4 * j + t] | (u[16 + 4 * j + t] << 4));
    }
  } else {
    for (int j = 0; j < 8; ++j) std::memcpy(block + j * 64 + cc * 4, u + 4 * j, 4);
  }
  uint8_t* scales = block + pack.int_bytes();
  if (pack.half_d) {
    const uint16_t h = float_to_half(d);
    std::memcpy(scales + 2 * cc, &h, 2);
  } else {
    std::memcpy(scales + 4 * cc, &d, 4);
  }
  if (pack.min_from_d == 0) {
    const uint16_t h = float_to_half(m);
    std::memcpy(scales + pack.d_bytes() + 2 * cc, &h, 2);
  }
}

#ifdef POCK_INT8_X86

// dot[r] += u . (the 4 bytes of row r of `a` at `offset`, broadcast), for r < R.
template <int R>
POCK_VNNI inline __attribute__((always_inline)) void add_products(__m512i* dot, __m512i u, const int8_t* a, int64_t lda,
                                                                   int offset) {
  for (int r = 0; r < R; ++r) {
    int32_t four;
    std::memcpy(&four, a + r * lda + offset, 4);
    dot[r] = _mm512_dpbusd_epi32(dot[r], u, _mm512_set1_epi32(four));
  }
}

// R rows of a (stride lda) against one group of 16 columns: y[r, 0..15] (+)= the products.
template <bool kNibbles, bool kHalfD, int kMinFromD, int R>
POCK_VNNI void tile(const uint8_t* group, int64_t blocks, int64_t block_bytes, const int8_t* a, int64_t lda, const float* s,
                    const float* t, int64_t lds, const float* bias, float* y, int64_t ldy, __mmask16 cols) {
  __m512 acc[R];
  const __m512 init = bias ? _mm512_maskz_loadu_ps(cols, bias) : _mm512_setzero_ps();
  for (int r = 0; r < R; ++r) acc[r] = init;
  const __m512i low = _mm512_set1_epi8(0x0f);
  for (int64_t b = 0; b < blocks; ++b, group += block_bytes) {
    __m512i dot[R];
    for (int r = 0; r < R; ++r) dot[r] = _mm512_setzero_si512();
    const int8_t* ab = a + b * 32;
    if constexpr (kNibbles) {
      for (int j = 0; j < 4; ++j) {
        const __m512i v = _mm512_load_si512(group + j * 64);
        add_products<R>(dot, _mm512_and_si512(v, low), ab, lda, 4 * j);
        add_products<R>(dot, _mm512_and_si512(_mm512_srli_epi16(v, 4), low), ab, lda, 16 + 4 * j);
      }
    } else {
      for (int j = 0; j < 8; ++j) add_products<R>(dot, _mm512_load_si512(group + j * 64), ab, lda, 4 * j);
    }
    const uint8_t* scales = group + (kNibbles ? 256 : 512);
    const __m512 d = kHalfD ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales)))
                            : _mm512_loadu_ps(reinterpret_cast<const float*>(scales));
    const __m512 m = kMinFromD == 0
                         ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + (kHalfD ? 32 : 64))))
                         : _mm512_mul_ps(d, _mm512_set1_ps(-static_cast<float>(kMinFromD)));
    for (int r = 0; r < R; ++r) {
      const __m512 ds = _mm512_mul_ps(d, _mm512_set1_ps(s[r * lds + b]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r]), ds, acc[r]);
      acc[r] = _mm512_fmadd_ps(m, _mm512_set1_ps(t[r * lds + b]), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy, cols, acc[r]);
}

// pock_quantize_row_i8 over 32 values with the same IEEE operations, 16 lanes at a time, so that
// the integers equal ref's: q = trunc(v * (127 / amax) +- 0.5) after clamping to +-127.
POCK_VNNI void quantize_block(const float* x, int8_t* q, float* s, float* t) {
  const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
  const __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
  const __m512 big = _mm512_set1_ps(3.402823466e38f);
  const __mmask16 finite0 = _mm512_cmp_ps_mask(a0, big, _CMP_LE_OQ), finite1 = _mm512_cmp_ps_mask(a1, big, _CMP_LE_OQ);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
  if (finite0 != 0xffff || finite1 != 0xffff || amax == 0.0f) {
    std::memset(q, 0, 32);
    *s = (finite0 != 0xffff || finite1 != 0xffff) ? __builtin_nanf("") : 0.0f;
    *t = *s;
    return;
  }
  const __m512 inv = _mm512_set1_ps(127.0f / amax);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f), half = _mm512_set1_ps(0.5f);
  __m512i sum = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    __m512 v = _mm512_mul_ps(h == 0 ? v0 : v1, inv);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __mmask16 negative = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512i up = _mm512_cvttps_epi32(_mm512_add_ps(v, half));
    const __m512i down = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_cvttps_epi32(_mm512_sub_ps(half, v)));
    const __m512i r = _mm512_mask_blend_epi32(negative, up, down);
    sum = _mm512_add_epi32(sum, r);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * h), _mm512_cvtepi32_epi8(r));
  }
  *s = amax / 127.0f;
  *t = *s * static_cast<float>(_mm512_reduce_add_epi32(sum));
}

template <bool kNibbles, bool kHalfD, int kMinFromD>
void rows_of_group(const Int8Pack& pack, int64_t g, const int8_t* a, const float* s, const float* t, int64_t m,
                   const float* bias, float* y, int64_t ldy) {
  const int64_t k = pack.blocks * 32, blocks = pack.blocks;
  const int64_t c0 = g * 16, width = std::min<int64_t>(16, pack.cols - c0);
  const __mmask16 cols = static_cast<__mmask16>((1u << width) - 1u);
  const uint8_t* group = pack.data.data() + g * blocks * pack.block_bytes();
  const float* b16 = bias ? bias + c0 : nullptr;
  int64_t r = 0;
  for (; r + kRowTile <= m; r += kRowTile) {
    tile<kNibbles, kHalfD, kMinFromD, kRowTile>(group, blocks, pack.block_bytes(), a + r * k, k, s + r * blocks, t + r * blocks, blocks, b16,
                             y + r * ldy + c0, ldy, cols);
  }
  auto rest = [&](auto rows) {
    tile<kNibbles, kHalfD, kMinFromD, decltype(rows)::value>(group, blocks, pack.block_bytes(), a + r * k, k, s + r * blocks, t + r * blocks,
                                          blocks, b16, y + r * ldy + c0, ldy, cols);
  };
  switch (m - r) {
    case 1: rest(std::integral_constant<int, 1>{}); break;
    case 2: rest(std::integral_constant<int, 2>{}); break;
    case 3: rest(std::integral_constant<int, 3>{}); break;
    case 4: rest(std::integral_constant<int, 4>{}); break;
    case 5: rest(std::integral_constant<int, 5>{}); break;
    case 6: rest(std::integral_constant<int, 6>{}); break;
    case 7: rest(std::integral_constant<int, 7>{}); break;
    default: break;
  }
}


// The same products on AVX2 (no VNNI): vpmaddubsw multiplies unsigned by signed bytes into
// saturating int16 pairs, so q4's 0..15 go as they are (15 * 127 * 2 fits), and q8 (stored as
// q + 128) goes back to signed q and through the sign trick, |q| * (a with q's sign): 128 * 127 * 2
// fits too, and the sum is then sum q a, to which no m term applies. 8 columns a ymm, two per group.
// dot[r][h] += the 4-value products of weight vector w (half h of a group) with row r of `a` at
// `offset`, for r < R.
template <bool kNibbles, int R>
POCK_AVX2 inline __attribute__((always_inline)) void add_products_avx2(__m256i (*dot)[2], __m256i w, int h, const int8_t* a,
                                                                        int64_t lda, int offset, __m256i flip, __m256i ones) {
  const __m256i q = kNibbles ? w : _mm256_xor_si256(w, flip);  // q8: back to signed q
  const __m256i u = kNibbles ? w : _mm256_sign_epi8(q, q);     // |q|
  for (int r = 0; r < R; ++r) {
    int32_t four;
    std::memcpy(&four, a + r * lda + offset, 4);
    __m256i x = _mm256_set1_epi32(four);
    if (!kNibbles) x = _mm256_sign_epi8(x, q);
    dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), ones));
  }
}

template <bool kNibbles, bool kHalfD, int kMinFromD, int R>
POCK_AVX2 void tile_avx2(const uint8_t* group, int64_t blocks, int64_t block_bytes, const int8_t* a, int64_t lda,
                         const float* s, const float* t, int64_t lds, const float* bias, float* y, int64_t ldy, int width) {
  __m256 acc[R][2];
  for (int h = 0; h < 2; ++h) {
    __m256 init = _mm256_setzero_ps();
    if (bias) {
      alignas(32) float b8[8] = {};
      for (int c = 0; c < 8 && 8 * h + c < width; ++c) b8[c] = bias[8 * h + c];
      init = _mm256_load_ps(b8);
    }
    for (int r = 0; r < R; ++r) acc[r][h] = init;
  }
  const __m256i low = _mm256_set1_epi8(0x0f), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < blocks; ++b, group += block_bytes) {
    __m256i dot[R][2];
    for (int r = 0; r < R; ++r) dot[r][0] = dot[r][1] = _mm256_setzero_si256();
    const int8_t* ab = a + b * 32;
    for (int h = 0; h < 2; ++h) {
      if constexpr (kNibbles) {
        for (int j = 0; j < 4; ++j) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + j * 64 + 32 * h));
          add_products_avx2<kNibbles, R>(dot, _mm256_and_si256(v, low), h, ab, lda, 4 * j, flip, ones);
          add_products_avx2<kNibbles, R>(dot, _mm256_and_si256(_mm256_srli_epi16(v, 4), low), h, ab, lda, 16 + 4 * j, flip, ones);
        }
      } else {
        for (int j = 0; j < 8; ++j) {
          add_products_avx2<kNibbles, R>(dot, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + j * 64 + 32 * h)), h, ab,
                                          lda, 4 * j, flip, ones);
        }
      }
    }
    const uint8_t* scales = group + (kNibbles ? 256 : 512);
    for (int h = 0; h < 2; ++h) {
      const __m256 d = kHalfD ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 16 * h)))
                              : _mm256_loadu_ps(reinterpret_cast<const float*>(scales) + 8 * h);
      const __m256 m = kMinFromD == 0
                           ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + (kHalfD ? 32 : 64) + 16 * h)))
                           : _mm256_mul_ps(d, _mm256_set1_ps(-static_cast<float>(kMinFromD)));
      for (int r = 0; r < R; ++r) {
        const __m256 ds = _mm256_mul_ps(d, _mm256_set1_ps(s[r * lds + b]));
        acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r][h]), ds, acc[r][h]);
        if (kNibbles) acc[r][h] = _mm256_fmadd_ps(m, _mm256_set1_ps(t[r * lds + b]), acc[r][h]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    alignas(32) float out[16];
    _mm256_store_ps(out, acc[r][0]);
    _mm256_store_ps(out + 8, acc[r][1]);
    std::memcpy(y + r * ldy, out, static_cast<size_t>(width) * sizeof(float));
  }
}

template <bool kNibbles, bool kHalfD, int kMinFromD>
void rows_of_group_avx2(const Int8Pack& pack, int64_t g, const int8_t* a, const float* s, const float* t, int64_t m,
                        const float* bias, float* y, int64_t ldy) {
  const int64_t k = pack.blocks * 32, blocks = pack.blocks;
  const int64_t c0 = g * 16;
  const int width = static_cast<int>(std::min<int64_t>(16, pack.cols - c0));
  const uint8_t* group = pack.data.data() + g * blocks * pack.block_bytes();
  const float* b16 = bias ? bias + c0 : nullptr;
  for (int64_t r = 0; r < m; r += 4) {
    const int64_t rows = std::min<int64_t>(4, m - r);
    auto call = [&](auto n) {
      tile_avx2<kNibbles, kHalfD, kMinFromD, decltype(n)::value>(group, blocks, pack.block_bytes(), a + r * k, k, s + r * blocks,
                                                                 t + r * blocks, blocks, b16, y + r * ldy + c0, ldy, width);
    };
    switch (rows) {
      case 1: call(std::integral_constant<int, 1>{}); break;
      case 2: call(std::integral_constant<int, 2>{}); break;
      case 3: call(std::integral_constant<int, 3>{}); break;
      default: call(std::integral_constant<int, 4>{}); break;
    }
  }
}

// CPUID leaf 1, ECX bit 29. Asked directly: clang 14's __builtin_cpu_supports knows no "f16c".
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

#endif  // POCK_INT8_X86

}  // namespace

Int8Isa int8_isa() {
#ifdef POCK_INT8_X86
  static const Int8Isa best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512dq")) {
      return Int8Isa::kAvx512Vnni;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c()) return Int8Isa::kAvx2;
    return Int8Isa::kNone;
  }();
  const char* forced = std::getenv("POCK_INT8_ISA");
  if (best == Int8Isa::kAvx512Vnni && forced && std::string_view(forced) == "avx2") return Int8Isa::kAvx2;
  return best;
#else
  return Int8Isa::kNone;
#endif
}

bool int8_gemm_supported() { return int8_isa() != Int8Isa::kNone; }

std::shared_ptr<Int8Pack> pack_weight_rows(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                           pthreadpool_t pool) {
  const bool nibbles = format != BlockFormat::kQ8_0;
  // The file's d is f16: exact in the pack. q4_1 keeps its f16 m; q4_0's is -8 d, q8's -128 d.
  const int min_from_d = format == BlockFormat::kQ4_1 ? 0 : format == BlockFormat::kQ4_0 ? 8 : 128;
  auto pack = new_pack(n, k / 32, nibbles, true, min_from_d);
  if (!pack) return nullptr;
  const int64_t block_bytes = block_layout(format).bytes;
  parallel_for(pool, static_cast<size_t>(n), 64, [&](size_t begin, size_t end) {
    int8_t q[32];
    uint8_t u[32];
    for (size_t j = begin; j < end; ++j) {
      for (int64_t b = 0; b < k / 32; ++b) {
        float d = 0.0f, m = 0.0f;
        block_int8_view(format, w + static_cast<int64_t>(j) * row_bytes + b * block_bytes, q, &d, &m);
        for (int i = 0; i < 32; ++i) u[i] = static_cast<uint8_t>(nibbles ? q[i] : q[i] + 128);
        // q8: d q = d (q + 128) - 128 d, and 128 d is exact.
        put_column(*pack, static_cast<int64_t>(j), b, u, d, nibbles ? m : m - 128.0f * d);
      }
    }
  });
  return pack;
}

std::shared_ptr<Int8Pack> pack_weight_columns(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                              pthreadpool_t pool) {
  auto pack = new_pack(k, n / 32, false, false, 128);
  if (!pack) return nullptr;
  const int64_t row_blocks = k / block_layout(format).values;
  std::atomic<bool> ok{true};
  parallel_for(pool, static_cast<size_t>(n / 32), 1, [&](size_t begin, size_t end) {
    std::vector<float> rows;
    try {
      rows.resize(static_cast<size_t>(32 * k));
    } catch (const std::bad_alloc&) {
      ok = false;
      return;
    }
    float column[32];
    int8_t q[32];
    uint8_t u[32];
    for (size_t ch = begin; ch < end; ++ch) {
      for (int64_t i = 0; i < 32; ++i) {
        decode_blocks(format, w + (static_cast<int64_t>(ch) * 32 + i) * row_bytes, row_blocks, rows.data() + i * k);
      }
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t i = 0; i < 32; ++i) column[i] = rows[static_cast<size_t>(i * k + p)];
        const float scale = pock_quantize_row_i8(column, 32, q);
        for (int i = 0; i < 32; ++i) u[i] = static_cast<uint8_t>(q[i] + 128);
        put_column(*pack, p, static_cast<int64_t>(ch), u, scale, -128.0f * scale);
      }
    }
  });
  return ok.load() ? pack : nullptr;
}

void decode_pack_row(const Int8Pack& pack, int64_t j, float* out) {
  const int64_t cc = j % 16;
  const uint8_t* group = pack.data.data() + (j / 16) * pack.blocks * pack.block_bytes();
  for (int64_t b = 0; b < pack.blocks; ++b, group += pack.block_bytes(), out += 32) {
    const uint8_t* scales = group + pack.int_bytes();
    float d = 0.0f;
    if (pack.half_d) {
      uint16_t h;
      std::memcpy(&h, scales + 2 * cc, 2);
      d = half_to_float(h);
    } else {
      std::memcpy(&d, scales + 4 * cc, 4);
    }
    float m = -static_cast<float>(pack.min_from_d) * d;
    if (pack.min_from_d == 0) {
      uint16_t h;
      std::memcpy(&h, scales + pack.d_bytes() + 2 * cc, 2);
      m = half_to_float(h);
    }
    for (int i = 0; i < 32; ++i) {
      const int j4 = i / 4, byte = i % 4;
      int u = 0;
      if (pack.nibbles) {
        const uint8_t v = group[(j4 % 4) * 64 + cc * 4 + byte];
        u = j4 < 4 ? (v & 0x0f) : (v >> 4);
      } else {
        u = group[j4 * 64 + cc * 4 + byte];
      }
      // q8: d (q + 128) - 128 d = d q exactly (an f16 d times 8 bits needs 19 of f32's 24).
      out[i] = d * static_cast<float>(u) + m;
    }
  }
}

void quantize_rows(const float* x, int64_t m, int64_t len, int8_t* a, float* s, float* t, pthreadpool_t pool) {
  const int64_t blocks = len / 32;
  parallel_for(pool, static_cast<size_t>(m * blocks), 256, [&](size_t begin, size_t end) {
#ifdef POCK_INT8_X86
    if (int8_isa() == Int8Isa::kAvx512Vnni) {
      for (size_t i = begin; i < end; ++i) quantize_block(x + i * 32, a + i * 32, s + i, t + i);
      return;
    }
#endif
    for (size_t i = begin; i < end; ++i) {
      int8_t* q = a + i * 32;
      s[i] = pock_quantize_row_i8(x + i * 32, 32, q);
      int32_t sum = 0;
      for (int v = 0; v < 32; ++v) sum += q[v];
      t[i] = s[i] * static_cast<float>(sum);
    }
  });
}

void int8_gemm(const Int8Pack& pack, const int8_t* a, const float* s, const float* t, int64_t m, const float* bias, float* y,
               int64_t ldy, pthreadpool_t pool) {
#ifdef POCK_INT8_X86
  const size_t groups = static_cast<size_t>(pack.groups());
  const bool vnni = int8_isa() == Int8Isa::kAvx512Vnni;
  parallel_for(pool, groups, balanced_tile(pool, groups, 1), [&](size_t begin, size_t end) {
    for (size_t g = begin; g < end; ++g) {
      const auto group = static_cast<int64_t>(g);
      if (!vnni) {
        if (pack.nibbles && pack.min_from_d == 0) {
          rows_of_group_avx2<true, true, 0>(pack, group, a, s, t, m, bias, y, ldy);
        } else if (pack.nibbles) {
          rows_of_group_avx2<true, true, 8>(pack, group, a, s, t, m, bias, y, ldy);
        } else if (pack.half_d) {
          rows_of_group_avx2<false, true, 128>(pack, group, a, s, t, m, bias, y, ldy);
        } else {
          rows_of_group_avx2<false, false, 128>(pack, group, a, s, t, m, bias, y, ldy);
        }
        continue;
      }
      if (pack.nibbles && pack.min_from_d == 0) {
        rows_of_group<true, true, 0>(pack, group, a, s, t, m, bias, y, ldy);
      } else if (pack.nibbles) {
        rows_of_group<true, true, 8>(pack, group, a, s, t, m, bias, y, ldy);
      } else if (pack.half_d) {
        rows_of_group<false, true, 128>(pack, group, a, s, t, m, bias, y, ldy);
      } else {
        rows_of_group<false, false, 128>(pack, group, a, s, t, m, bias, y, ldy);
      }
    }
  });
#else
  (void)pack, (void)a, (void)s, (void)t, (void)m, (void)bias, (void)y, (void)ldy, (void)pool;
#endif
}

}  // namespace pock::cpu
