#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/dnnl_threads.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kernels/bf16_round.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define POCK_BF16_X86 1
#endif

#ifdef POCK_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace pock::cpu {
namespace {

#if defined(POCK_BF16_X86) && defined(POCK_HAVE_DNNL)
// CPUID leaf 7 sub-leaf 1, EAX bit 5 (AVX512_BF16). Asked directly: clang 14's
// __builtin_cpu_supports knows no "avx512bf16".
bool cpu_has_avx512_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax & (1u << 5)) != 0;
}

// f32 -> bf16, nearest even, with VCVTNEPS2BF16 (as oneDNN's own conversions; it reads denormal
// inputs as zero). Not oneDNN's 1-D reorder: measured here, it took up to 100x longer than this
// loop on a few hundred thousand values.
__attribute__((target("avx512f,avx512bf16"))) void convert_avx512_bf16(const float* in, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh v = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    std::memcpy(out + i, &v, sizeof v);
  }
  for (; i < n; ++i) out[i] = pock_f32_to_bf16(in[i]);
}
#endif

}  // namespace

Bf16Isa bf16_isa() {
#if defined(POCK_BF16_X86) && defined(POCK_HAVE_DNNL)
  static const Bf16Isa best = cpu_has_avx512_bf16() ? Bf16Isa::kAvx512Bf16 : Bf16Isa::kF32Fma;
  const char* forced = std::getenv("POCK_BF16_ISA");
  if (forced && std::string_view(forced) == "fp32") return Bf16Isa::kF32Fma;
  return best;
#else
  return Bf16Isa::kF32Fma;
#endif
}

void round_to_bf16(const float* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = pock_round_bf16(in[i]);
}

void widen_bf16(const uint16_t* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = pock_bf16_to_f32(in[i]);
}

void convert_to_bf16(const float* in, int64_t n, uint16_t* out) {
#if defined(POCK_BF16_X86) && defined(POCK_HAVE_DNNL)
  if (bf16_isa() == Bf16Isa::kAvx512Bf16) {
    convert_avx512_bf16(in, n, out);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = pock_f32_to_bf16(in[i]);
}

#ifdef POCK_HAVE_DNNL

// oneDNN's C++ API reports errors as dnnl::error exceptions; they stop here, as a Status.
struct DnnlBf16Gemm::Primitives {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  Bf16GemmShape shape;
  // One [M, N] product; its memories are re-pointed at each pair of offsets.
  dnnl::memory src, weights, bias, dst;
  dnnl::matmul matmul;
  std::unordered_map<int, dnnl::memory> args;  // made once: the handles above share their memories
  int threads = 0;                             // the op's num_threads; 0: oneDNN's default
};

namespace {

using dt = dnnl::memory::data_type;

// A row-major operand [rows, cols] (its transpose when `transposed`) with leading dimension ld.
dnnl::memory::desc matrix(int64_t rows, int64_t cols, bool transposed, int64_t ld, dt type) {
  return dnnl::memory::desc({rows, cols}, type, transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1});
}

}  // namespace

DnnlBf16Gemm::DnnlBf16Gemm(std::unique_ptr<Primitives> p) : p_(std::move(p)) {}
DnnlBf16Gemm::~DnnlBf16Gemm() = default;

Result<std::unique_ptr<DnnlBf16Gemm>> DnnlBf16Gemm::create(const Bf16GemmShape& s, int32_t num_threads) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
    return Status(Code::kInvalidArgument, "bf16 GEMM: oneDNN takes no empty operand");
  }
  // oneDNN splits the work for the thread count it sees when the primitive is made, and runs it
  // on that many threads whatever the count at run time: made under OpenMP's default, a GEMM of a
  // one-thread engine would run on every core.
  set_dnnl_threads(num_threads);
  try {
    auto p = std::make_unique<Primitives>();
    p->shape = s;
    p->threads = num_threads;
    const auto src = matrix(s.m, s.k, s.transpose_a, s.lda, dt::bf16);
    const auto weights = matrix(s.k, s.n, s.transpose_b, s.ldb, dt::bf16);
    const auto dst = matrix(s.m, s.n, false, s.n, dt::f32);
    const auto bias = dnnl::memory::desc({1, s.n}, dt::f32, dnnl::memory::format_tag::ab);
    const dnnl::matmul::desc desc = s.bias ? dnnl::matmul::desc(src, weights, bias, dst) : dnnl::matmul::desc(src, weights, dst);
    p->matmul = dnnl::matmul(dnnl::matmul::primitive_desc(desc, p->engine));
    p->src = dnnl::memory(src, p->engine, DNNL_MEMORY_NONE);
    p->weights = dnnl::memory(weights, p->engine, DNNL_MEMORY_NONE);
    p->dst = dnnl::memory(dst, p->engine, DNNL_MEMORY_NONE);
    p->args = {{DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, p->dst}};
    if (s.bias) {
      p->bias = dnnl::memory(bias, p->engine, DNNL_MEMORY_NONE);
      p->args.emplace(DNNL_ARG_BIAS, p->bias);
    }
    return std::unique_ptr<DnnlBf16Gemm>(new DnnlBf16Gemm(std::move(p)));
  } catch (const dnnl::error& e) {
    return Status(Code::kInternal, std::string("bf16 GEMM: oneDNN could not make its primitives: ") + e.what());
  } catch (const std::bad_alloc&) {
    return Status(Code::kOutOfMemory, "bf16 GEMM: oneDNN's primitives");
  }
}

Status DnnlBf16Gemm::run(const uint16_t* a, const uint16_t* b, const float* bias, float* y,
                         const std::vector<int64_t>& a_offsets, const std::vector<int64_t>& b_offsets) const {
  Primitives& p = *p_;
  set_dnnl_threads(p.threads);
  try {
    // oneDNN reads through non-const handles but never writes a source.
    if (p.shape.bias) p.bias.set_data_handle(const_cast<float*>(bias));
    auto* a16 = const_cast<uint16_t*>(a);
    auto* b16 = const_cast<uint16_t*>(b);
    const int64_t block = p.shape.m * p.shape.n;
    for (size_t i = 0; i < a_offsets.size(); ++i) {
      p.src.set_data_handle(a16 + a_offsets[i]);
      p.weights.set_data_handle(b16 + b_offsets[i]);
      p.dst.set_data_handle(y + static_cast<int64_t>(i) * block);
      p.matmul.execute(p.stream, p.args);
    }
    p.stream.wait();
  } catch (const dnnl::error& e) {
    return Status(Code::kInternal, std::string("bf16 GEMM: oneDNN failed: ") + e.what());
  }
  return Status::ok();
}

#else  // no oneDNN: bf16_isa() is always kF32Fma

struct DnnlBf16Gemm::Primitives {};
DnnlBf16Gemm::DnnlBf16Gemm(std::unique_ptr<Primitives> p) : p_(std::move(p)) {}
DnnlBf16Gemm::~DnnlBf16Gemm() = default;

Result<std::unique_ptr<DnnlBf16Gemm>> DnnlBf16Gemm::create(const Bf16GemmShape&, int32_t) {
  return Status(Code::kUnsupportedOp, "bf16 GEMM: this build has no oneDNN");
}

Status DnnlBf16Gemm::run(const uint16_t*, const uint16_t*, const float*, float*, const std::vector<int64_t>&,
                         const std::vector<int64_t>&) const {
  return Status(Code::kUnsupportedOp, "bf16 GEMM: this build has no oneDNN");
}

#endif

}  // namespace pock::cpu
