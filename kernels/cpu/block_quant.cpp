// LinearQ and LinearQInputGrad on block-quantized frozen weights (ir/block_format.hpp), exact
// with respect to the decoded weight (no activation quantization):
// - many rows (training, prefill: M > kSmallRows): the weight is decoded a panel of rows at a time
//   into the engine's shared scratch (a panel fits in L2) and each panel is one OpenBLAS sgemm,
//   so the layer runs near the f32 GEMM's speed; decoding costs 1/M of the products.
// - few rows (decode steps): each weight row is decoded 256 values at a time into a stack buffer
//   and dotted with every row of x while it is in L1, so nothing but the blocks streams from
//   memory. LinearQInputGrad does the same over column chunks, each thread owning a chunk of dx.
// Both read the weight rows as stored: no transposed copy for the input gradient.
// With compute "int8" (recipe frozen_matmul) both run on integer dot products instead
// (block_int8_gemm.hpp) where the CPU has AVX-512 VNNI, and on ref elsewhere.
// GatherQ runs on ref (a copy of decoded rows). Without OpenBLAS every op here runs on ref.
#include "kernels/cpu/cpu_families.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/block_decode.hpp"
#include "kernels/cpu/block_int8_gemm.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/block_quant.hpp"
#include "kernels/params/training.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kPanelBytes = size_t{512} << 10;  // decoded rows per sgemm: half of this core's L2
constexpr int64_t kSmallRows = 8;                   // up to this M, the streaming path
constexpr int64_t kChunk = 256;                     // values decoded at once on that path (whole blocks of every format)
constexpr int64_t kHeadRows = 64;  // LinearQCrossEntropy's rows at a time: 12.6 MB of logits for a 49k vocabulary

struct Plan {
  params::BlockQuantParams p;
  int64_t m = 0, n = 0;      // rows of x (or dy) and of the weight
  int64_t panel_rows = 0;    // weight rows decoded per sgemm
  KernelScope* scope = nullptr;
  pthreadpool_t pool = nullptr;
  std::shared_ptr<Int8Pack> pack;     // compute int8: the weight for integer products, shared by every op over it
  std::shared_ptr<Int8Pack> columns;  // LinearQCrossEntropy with a gradient: the pack for dx
  int64_t k() const { return p.in_features; }
  const uint8_t* row(const uint8_t* w, int64_t j) const { return w + j * p.row_bytes; }
  // `len` values of row j from value `from` (both multiples of the block size) into `out`.
  void decode(const uint8_t* w, int64_t j, int64_t from, int64_t len, float* out) const {
    const BlockLayout b = block_layout(p.format);
    decode_blocks_fast(p.format, row(w, j) + from / b.values * b.bytes, len / b.values, out);
  }
};

// Scratch floats for `values` quantized activations: the int8 values (64-byte rounded), then s, t.
size_t int8_scratch_floats(size_t values) { return (values + 63) / 64 * 16 + 2 * (values / 32); }

struct Int8Rows {
  int8_t* a;
  float* s;
  float* t;
};

Int8Rows int8_rows(const Plan& plan, size_t values, size_t skip_floats = 0) {
  auto* base = reinterpret_cast<float*>(plan.scope->scratch()) + skip_floats;
  float* s = base + (values + 63) / 64 * 16;
  return {reinterpret_cast<int8_t*>(base), s, s + values / 32};
}

// acc[r] += sum_p w[p] x[r * ldx + p] for r < rows.
POCK_SIMD_CLONES void dot_rows(const float* w, const float* x, int64_t len, int64_t rows, int64_t ldx, float* acc) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t p = 0; p < len; ++p) s += w[p] * xr[p];
    acc[r] += s;
  }
}

// dx[r * lddx + p] += g[r * ldg] w[p] for r < rows.
POCK_SIMD_CLONES void axpy_rows(const float* w, const float* g, int64_t ldg, int64_t len, int64_t rows, float* dx, int64_t lddx) {
  for (int64_t r = 0; r < rows; ++r) {
    const float a = g[r * ldg];
    float* d = dx + r * lddx;
#pragma omp simd
    for (int64_t p = 0; p < len; ++p) d[p] += a * w[p];
  }
}

// Rows [r0, r1) of the weight, decoded into `out` ([r1 - r0, K]), split over the pool.
void decode_panel(const Plan& plan, const uint8_t* w, int64_t r0, int64_t r1, float* out) {
  const size_t rows = static_cast<size_t>(r1 - r0);
  parallel_for(plan.pool, rows, balanced_tile(plan.pool, rows, 4), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) plan.decode(w, r0 + static_cast<int64_t>(i), 0, plan.k(), out + i * static_cast<size_t>(plan.k()));
  });
}

// x f32 and a u8 weight of known blocks that the sgemm (or the int8 kernels) can take.
bool accepts_operands(const pock_op_desc& op) {
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1];
  if (!is_f32(x) || w.dtype != POCK_U8 || w.rank != 2 || x.rank < 1) return false;
  params::BlockQuantParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  if (p.int8 && !int8_gemm_supported()) return false;
  return fits_blas_int(dims_product(x, 0, x.rank - 1)) && fits_blas_int(w.dims[0]) && fits_blas_int(p.in_features);
}

bool accepts(const pock_op_desc& op) { return op.num_inputs >= 2 && op.num_outputs == 1 && accepts_operands(op); }

// The weight's pack for integer products (its rows for y = x Wᵀ, or its requantized columns for
// dx = dy W), built by the first op over it and shared by every other.
Status shared_pack(const pock_op_desc& op, const Plan& plan, bool columns, std::shared_ptr<Int8Pack>* out, int weight_input = 1) {
  const pock_tensor_desc& weight = op.inputs[weight_input];
  if (!weight.data) return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': compute int8 needs a constant weight");
  const std::string key = std::string(columns ? "int8 columns " : "int8 rows ") +
                          std::to_string(reinterpret_cast<uintptr_t>(weight.data)) + " " +
                          block_format_name(plan.p.format) + " " + std::to_string(plan.n) + "x" + std::to_string(plan.k());
  *out = std::static_pointer_cast<Int8Pack>(plan.scope->find_shared(key));
  if (*out) return Status::ok();
  const auto* w = static_cast<const uint8_t*>(weight.data);
  *out = columns ? pack_weight_columns(plan.p.format, w, plan.n, plan.k(), plan.p.row_bytes, plan.pool)
                 : pack_weight_rows(plan.p.format, w, plan.n, plan.k(), plan.p.row_bytes, plan.pool);
  if (!*out || !plan.scope->put_shared(key, *out)) {
    return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for the int8 weight");
  }
  return Status::ok();
}

// The pack and scratch for the quantized activations: a [m, len] int8, then s and t [m, len / 32].
// LinearQCrossEntropy: both packs, and a chunk of logits before the int8 scratch.
Status prepare_int8(const pock_op_desc& op, Plan* plan) {
  const std::string_view name = op.op;
  if (name == "LinearQCrossEntropy") {
    POCK_RETURN_IF_ERROR(shared_pack(op, *plan, false, &plan->pack));
    if (op.num_outputs > 1) POCK_RETURN_IF_ERROR(shared_pack(op, *plan, true, &plan->columns));
    const size_t chunk = static_cast<size_t>(std::min(plan->m, kHeadRows));
    const size_t values = chunk * static_cast<size_t>(std::max(plan->n, plan->k()));
    return plan->scope->reserve_scratch((chunk * static_cast<size_t>(plan->n) + int8_scratch_floats(values)) * sizeof(float),
                                        "LinearQCrossEntropy logits");
  }
  const bool input_grad = name == "LinearQInputGrad";
  POCK_RETURN_IF_ERROR(shared_pack(op, *plan, input_grad, &plan->pack));
  const size_t values = static_cast<size_t>(plan->m * (input_grad ? plan->n : plan->k()));
  return plan->scope->reserve_scratch(int8_scratch_floats(values) * sizeof(float), "int8 activations");
}

Status prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  auto* plan = new (std::nothrow) Plan;
  if (!plan) return Status(Code::kOutOfMemory, std::string(op.op) + " plan");
  if (Status s = params::parse(op, &plan->p); !s.is_ok()) {
    delete plan;
    return s;
  }
  plan->m = dims_product(op.inputs[0], 0, op.inputs[0].rank - 1);
  plan->n = op.inputs[1].dims[0];
  plan->scope = &scope;
  plan->pool = thread_pool_for(op.num_threads);
  if (plan->p.int8) {
    if (Status s = prepare_int8(op, plan); !s.is_ok()) {
      delete plan;
      return s;
    }
    *state = plan;
    return Status::ok();
  }
  if (plan->m > kSmallRows) {
    const int64_t fit = static_cast<int64_t>(kPanelBytes / sizeof(float)) / std::max<int64_t>(1, plan->k());
    plan->panel_rows = std::max<int64_t>(16, std::min(plan->n, fit / 16 * 16));
    const size_t bytes = static_cast<size_t>(std::min(plan->n, plan->panel_rows) * plan->k()) * sizeof(float);
    if (Status s = scope.reserve_scratch(bytes, "LinearQ decoded panel"); !s.is_ok()) {
      delete plan;
      return s;
    }
  }
  configure_blas_threads(op.num_threads);
  *state = plan;
  return Status::ok();
}

void release(void* state) { delete static_cast<Plan*>(state); }

// y = x dequant(w)ᵀ + bias.
Status linear_q(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, n = plan.n, k = plan.k();
  const float* x = c.in_data<float>(0);
  const uint8_t* w = c.in_data<uint8_t>(1);
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  if (m == 0 || n == 0) return Status::ok();
  if (plan.pack) {
    const Int8Rows q = int8_rows(plan, static_cast<size_t>(m * k));
    quantize_rows(x, m, k, q.a, q.s, q.t, plan.pool);
    int8_gemm(*plan.pack, q.a, q.s, q.t, m, bias, y, n, plan.pool);
    return Status::ok();
  }
  if (m <= kSmallRows) {
    parallel_for(plan.pool, static_cast<size_t>(n), balanced_tile(plan.pool, static_cast<size_t>(n), 16), [&](size_t b, size_t e) {
      alignas(64) float buf[kChunk];
      for (size_t j = b; j < e; ++j) {
        float acc[kSmallRows] = {};
        for (int64_t from = 0; from < k; from += kChunk) {
          const int64_t len = std::min(kChunk, k - from);
          plan.decode(w, static_cast<int64_t>(j), from, len, buf);
          dot_rows(buf, x + from, len, m, k, acc);
        }
        for (int64_t r = 0; r < m; ++r) y[r * n + static_cast<int64_t>(j)] = acc[r] + (bias ? bias[j] : 0.0f);
      }
    });
    return Status::ok();
  }
  float beta = 0.0f;
  if (bias) {
    for (int64_t r = 0; r < m; ++r) std::copy(bias, bias + n, y + r * n);
    beta = 1.0f;
  }
  float* panel = reinterpret_cast<float*>(plan.scope->scratch());
  for (int64_t r0 = 0; r0 < n; r0 += plan.panel_rows) {
    const int64_t rows = std::min(plan.panel_rows, n - r0);
    decode_panel(plan, w, r0, r0 + rows, panel);
    parallel_sgemm(plan.pool, {false, true, m, rows, k, 1.0f, x, k, panel, k, beta, y + r0, n});
  }
  return Status::ok();
}

// dx = dy dequant(w): a sum over the weight's rows, each read as stored.
Status linear_q_input_grad(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, n = plan.n, k = plan.k();
  const float* dy = c.in_data<float>(0);
  const uint8_t* w = c.in_data<uint8_t>(1);
  float* dx = c.out_data<float>(0);
  if (m == 0) return Status::ok();
  if (plan.pack) {
    const Int8Rows q = int8_rows(plan, static_cast<size_t>(m * n));
    quantize_rows(dy, m, n, q.a, q.s, q.t, plan.pool);
    int8_gemm(*plan.pack, q.a, q.s, q.t, m, nullptr, dx, k, plan.pool);
    return Status::ok();
  }
  if (m <= kSmallRows || n == 0) {
    const size_t chunks = static_cast<size_t>((k + kChunk - 1) / kChunk);
    parallel_for(plan.pool, chunks, 1, [&](size_t b, size_t e) {
      alignas(64) float buf[kChunk];
      for (size_t ci = b; ci < e; ++ci) {
        const int64_t from = static_cast<int64_t>(ci) * kChunk, len = std::min(kChunk, k - from);
        for (int64_t r = 0; r < m; ++r) std::fill(dx + r * k + from, dx + r * k + from + len, 0.0f);
        for (int64_t j = 0; j < n; ++j) {
          plan.decode(w, j, from, len, buf);
          axpy_rows(buf, dy + j, n, len, m, dx + from, k);
        }
      }
    });
    return Status::ok();
  }
  float* panel = reinterpret_cast<float*>(plan.scope->scratch());
  for (int64_t r0 = 0; r0 < n; r0 += plan.panel_rows) {
    const int64_t rows = std::min(plan.panel_rows, n - r0);
    decode_panel(plan, w, r0, r0 + rows, panel);
    parallel_sgemm(plan.pool, {false, false, m, k, rows, 1.0f, dy + r0, n, panel, k, r0 == 0 ? 0.0f : 1.0f, dx, k});
  }
  return Status::ok();
}

// Per row of logits z (n classes): its cross-entropy, and z replaced by the loss gradient
// (softmax - (1 - e) onehot - e / n) * scale. Sums in f32 lanes; ref sums in double.
POCK_SIMD_CLONES double cross_entropy_row(float* z, int64_t n, int64_t label, double eps, float scale) {
  float mx = z[0];
#pragma omp simd reduction(max : mx)
  for (int64_t j = 0; j < n; ++j) mx = z[j] > mx ? z[j] : mx;
  float sum = 0.0f, total = 0.0f;
#pragma omp simd reduction(+ : sum, total)
  for (int64_t j = 0; j < n; ++j) {
    sum += simd::exp(z[j] - mx);
    total += z[j];
  }
  const float lse = mx + std::log(sum);
  const double loss = lse - (1.0 - eps) * z[label] - eps * static_cast<double>(total) / static_cast<double>(n);
  const float floor = static_cast<float>(eps / static_cast<double>(n));
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) z[j] = (simd::exp(z[j] - lse) - floor) * scale;
  z[label] -= static_cast<float>(1.0 - eps) * scale;
  return loss;
}

// SoftmaxCrossEntropy(LinearQ(x, w), labels) and its x gradient (dloss = 1), kHeadRows rows at a
// time: the logits of a chunk, their loss and gradient in place, then dx of the chunk.
Status linear_q_cross_entropy(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const int64_t m = plan.m, n = plan.n, k = plan.k();
  const int64_t* labels = c.in_data<int64_t>(2);
  const int64_t ignore = plan.p.ignore_index;
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, m, n, ignore, &counted));
  const float* x = c.in_data<float>(0);
  float* dx = plan.columns ? c.out_data<float>(1) : nullptr;
  const size_t chunk_floats = static_cast<size_t>(std::min(m, kHeadRows) * n);
  float* z = reinterpret_cast<float*>(plan.scope->scratch());
  const Int8Rows q = int8_rows(plan, static_cast<size_t>(std::min(m, kHeadRows) * std::max(n, k)), chunk_floats);
  const float scale = counted ? 1.0f / static_cast<float>(counted) : 0.0f;
  double total = 0.0;
  double row_loss[kHeadRows];
  for (int64_t r0 = 0; r0 < m; r0 += kHeadRows) {
    const int64_t rows = std::min(kHeadRows, m - r0);
    quantize_rows(x + r0 * k, rows, k, q.a, q.s, q.t, plan.pool);
    int8_gemm(*plan.pack, q.a, q.s, q.t, rows, nullptr, z, n, plan.pool);
    parallel_for(plan.pool, static_cast<size_t>(rows), 1, [&](size_t b, size_t e) {
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
    int8_gemm(*plan.columns, q.a, q.s, q.t, rows, nullptr, dx + r0 * k, k, plan.pool);
  }
  *c.out_data<float>(0) = counted ? static_cast<float>(total / static_cast<double>(counted)) : 0.0f;
  return Status::ok();
}

bool head_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 3 || op.num_outputs < 1 || op.num_outputs > 2 || op.inputs[2].dtype != POCK_I64) return false;
  params::BlockQuantParams p;
  return accepts_operands(op) && params::parse(op, &p).is_ok() && p.int8;
}

// GatherQ with compute "int8": the rows come from the pack the LM head's int8 products share (the
// tied embedding), exactly the values ref decodes from the blocks, so that the table's blocks in
// the mapped file are never read again: random token rows would keep most of its pages resident.
bool gather_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &table = op.inputs[0], &ids = op.inputs[1];
  params::BlockQuantParams p;
  return table.dtype == POCK_U8 && table.rank == 2 && (ids.dtype == POCK_I32 || ids.dtype == POCK_I64) &&
         params::parse(op, &p).is_ok() && p.int8 && int8_gemm_supported();
}

Status gather_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  auto plan = std::unique_ptr<Plan>(new (std::nothrow) Plan);
  if (!plan) return Status(Code::kOutOfMemory, std::string(op.op) + " plan");
  POCK_RETURN_IF_ERROR(params::parse(op, &plan->p));
  plan->n = op.inputs[0].dims[0];
  plan->scope = &scope;
  plan->pool = thread_pool_for(op.num_threads);
  POCK_RETURN_IF_ERROR(shared_pack(op, *plan, false, &plan->pack, 0));
  *state = plan.release();
  return Status::ok();
}

Status gather_q(const KernelCall& c) {
  const Plan& plan = *static_cast<const Plan*>(c.state);
  const pock_tensor_desc& ids = c.in(1);
  const int64_t count = dims_product(ids, 0, ids.rank), rows = plan.n, k = plan.k();
  auto id_at = [&](int64_t i) {
    return ids.dtype == POCK_I32 ? int64_t{static_cast<const int32_t*>(ids.data)[i]} : static_cast<const int64_t*>(ids.data)[i];
  };
  for (int64_t i = 0; i < count; ++i) {  // every index checked before anything is written, as ref does
    const int64_t v = id_at(i);
    if (v < -rows || v >= rows) {
      return c.error("index " + std::to_string(v) + " at position " + std::to_string(i) + " is out of range [" +
                     std::to_string(-rows) + ", " + std::to_string(rows) + ")");
    }
  }
  float* y = c.out_data<float>(0);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = id_at(i);
    decode_pack_row(*plan.pack, v < 0 ? v + rows : v, y + i * k);
  }
  return Status::ok();
}

KernelDef def(const char* op, KernelFn run) {
  KernelDef d{op, DType::kF32, run, kCpuScore, nullptr, release};
  d.prepare_scoped = prepare;
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_block_quant(KernelTable& t) {
  t.add(def("LinearQ", linear_q));
  t.add(def("LinearQInputGrad", linear_q_input_grad));
  KernelDef head = def("LinearQCrossEntropy", linear_q_cross_entropy);
  head.accepts = head_accepts;  // int8 only: exact stays unfused (the compiler fuses int8 heads)
  t.add(head);
  KernelDef gather{"GatherQ", DType::kU8, gather_q, kCpuScore, nullptr, release};
  gather.prepare_scoped = gather_prepare;
  gather.accepts = gather_accepts;
  t.add(gather);
}

}  // namespace pock::cpu

#else  // no OpenBLAS: the block_quant ops run on ref

namespace pock::cpu {
void register_block_quant(KernelTable&) {}
}  // namespace pock::cpu

#endif
