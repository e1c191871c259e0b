// Reference kernels of the block_quant family: each weight row decoded with the shared block
// decoder (ir/block_format.hpp), then the f32 math with double accumulation, as ref's Linear.
// With compute "int8" they define the integer arithmetic every backend's int8 path follows:
//   LinearQ: each row of x is quantized per 32-value block b (kernels/int8_rows.h: a[r, b, :],
//     scale s[r, b]); each weight block is d q + m (block_int8_view);
//     y[r, j] = bias[j] + sum_b s[r, b] (d[j, b] sum_i a q + m[j, b] sum_i a).
//   LinearQInputGrad: dy's rows are quantized per 32 values of N, and so is each column of the
//     decoded weight over the same 32 rows (qt[p, c, :], scale st[p, c]);
//     dx[r, p] = sum_c s[r, c] st[p, c] sum_i a[r, c, i] qt[p, c, i].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>
#include <new>
#include <vector>

#include "kernels/int8_rows.h"
#include "kernels/params/block_quant.hpp"
#include "kernels/params/training.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// The parameters and one decoded weight row, made at prepare so that a step allocates nothing.
struct DecodedRow {
  params::BlockQuantParams p;
  std::vector<float> row;
  std::vector<double> acc;  // LinearQInputGrad: dx summed in double
  // compute int8: the quantized activations (or output gradient) and their block scales, one
  // weight row's integers and block parameters (LinearQ), or 32 decoded rows (the input gradient).
  std::vector<int8_t> a, q;
  std::vector<float> a_scale, d, m, rows32;
  std::vector<float> logits;  // LinearQCrossEntropy: one chunk of rows' logits, then their gradient
};

constexpr size_t kHeadChunk = 32;  // LinearQCrossEntropy's rows at a time

Status prepare(const pock_op_desc& op, void** state) {
  auto s = std::unique_ptr<DecodedRow>(new (std::nothrow) DecodedRow{});
  if (!s) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for its state");
  POCK_RETURN_IF_ERROR(params::parse(op, &s->p));
  s->row.resize(static_cast<size_t>(s->p.in_features));
  const bool input_grad = std::string_view(op.op) == "LinearQInputGrad";
  if (input_grad) s->acc.resize(static_cast<size_t>(numel(op.outputs[0])));
  if (std::string_view(op.op) == "LinearQCrossEntropy") {
    const size_t k = static_cast<size_t>(s->p.in_features), n = static_cast<size_t>(op.inputs[1].dims[0]);
    s->logits.resize(kHeadChunk * n);
    s->acc.resize(kHeadChunk * k);
    s->row.resize(k);
    s->a.resize(kHeadChunk * std::max(k, n));
    s->a_scale.resize(kHeadChunk * std::max(k, n) / 32 + 1);
    s->q.resize(k);
    s->d.resize(k / 32 + 1);
    s->m.resize(k / 32 + 1);
    s->rows32.resize(32 * k);
  } else if (s->p.int8) {
    const size_t a_values = static_cast<size_t>(numel(op.inputs[0]));
    s->a.resize(a_values);
    s->a_scale.resize(a_values / 32);
    const size_t k = static_cast<size_t>(s->p.in_features);
    s->q.resize(k);
    s->d.resize(k / 32);
    s->m.resize(k / 32);
    if (input_grad) s->rows32.resize(32 * k);
  }
  *state = s.release();
  return Status::ok();
}

void release(void* state) { delete static_cast<DecodedRow*>(state); }

// Row j of the weight, decoded into the state's buffer.
const float* decoded_row(const KernelCall& c, int weight_input, int64_t j) {
  auto* s = static_cast<DecodedRow*>(c.state);
  const uint8_t* blocks = c.in_data<uint8_t>(weight_input) + j * s->p.row_bytes;
  decode_blocks(s->p.format, blocks, s->p.row_blocks, s->row.data());
  return s->row.data();
}

int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}

// y[r, j] = sum_p x[r, p] w[j, p] + bias[j]
Status linear_q_int8(const KernelCall& c);
Status linear_q_input_grad_int8(const KernelCall& c);

Status linear_q(const KernelCall& c) {
  if (static_cast<const DecodedRow*>(c.state)->p.int8) return linear_q_int8(c);
  const int64_t k = static_cast<const DecodedRow*>(c.state)->p.in_features;
  const int64_t n = c.in(1).dims[0];
  const int64_t rows = leading_rows(c.in(0));
  const float* x = c.in_data<float>(0);
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  for (int64_t j = 0; j < n; ++j) {
    const float* w = decoded_row(c, 1, j);
    for (int64_t r = 0; r < rows; ++r) {
      double acc = bias ? static_cast<double>(bias[j]) : 0.0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(x[r * k + p]) * static_cast<double>(w[p]);
      y[r * n + j] = static_cast<float>(acc);
    }
  }
  return Status::ok();
}

// dx[r, p] = sum_j dy[r, j] w[j, p], summed in double over j.
Status linear_q_input_grad(const KernelCall& c) {
  if (static_cast<const DecodedRow*>(c.state)->p.int8) return linear_q_input_grad_int8(c);
  const int64_t k = static_cast<const DecodedRow*>(c.state)->p.in_features;
  const int64_t n = c.in(1).dims[0];
  const int64_t rows = leading_rows(c.in(0));
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::vector<double>& acc = static_cast<DecodedRow*>(c.state)->acc;
  std::fill(acc.begin(), acc.end(), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const float* w = decoded_row(c, 1, j);
    for (int64_t r = 0; r < rows; ++r) {
      const double g = dy[r * n + j];
      for (int64_t p = 0; p < k; ++p) acc[static_cast<size_t>(r * k + p)] += g * static_cast<double>(w[p]);
    }
  }
  for (size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
  return Status::ok();
}

// Rows of `v` ([rows, len], len a multiple of 32) quantized per 32-value block into the state.
void quantize_blocks(DecodedRow* s, const float* v, int64_t rows, int64_t len) {
  for (int64_t i = 0; i < rows * len / 32; ++i) s->a_scale[static_cast<size_t>(i)] = pock_quantize_row_i8(v + 32 * i, 32, s->a.data() + 32 * i);
}

Status linear_q_int8(const KernelCall& c) {
  auto* s = static_cast<DecodedRow*>(c.state);
  const int64_t k = s->p.in_features, blocks = k / 32;
  const int64_t n = c.in(1).dims[0];
  const int64_t rows = leading_rows(c.in(0));
  const int64_t block_bytes = block_layout(s->p.format).bytes;
  const float* bias = c.has_input(2) ? c.in_data<float>(2) : nullptr;
  float* y = c.out_data<float>(0);
  quantize_blocks(s, c.in_data<float>(0), rows, k);
  for (int64_t j = 0; j < n; ++j) {
    const uint8_t* row = c.in_data<uint8_t>(1) + j * s->p.row_bytes;
    for (int64_t b = 0; b < blocks; ++b) block_int8_view(s->p.format, row + b * block_bytes, s->q.data() + 32 * b, &s->d[b], &s->m[b]);
    for (int64_t r = 0; r < rows; ++r) {
      double acc = bias ? static_cast<double>(bias[j]) : 0.0;
      for (int64_t b = 0; b < blocks; ++b) {
        const int8_t* a = s->a.data() + r * k + 32 * b;
        const int8_t* q = s->q.data() + 32 * b;
        int32_t dot = 0, sum = 0;
        for (int i = 0; i < 32; ++i) {
          dot += int32_t{a[i]} * int32_t{q[i]};
          sum += a[i];
        }
        acc += static_cast<double>(s->a_scale[static_cast<size_t>(r * blocks + b)]) *
               (static_cast<double>(s->d[b]) * dot + static_cast<double>(s->m[b]) * sum);
      }
      y[r * n + j] = static_cast<float>(acc);
    }
  }
  return Status::ok();
}

Status linear_q_input_grad_int8(const KernelCall& c) {
  auto* s = static_cast<DecodedRow*>(c.state);
  const int64_t k = s->p.in_features;
  const int64_t n = c.in(1).dims[0], chunks = n / 32;
  const int64_t rows = leading_rows(c.in(0));
  quantize_blocks(s, c.in_data<float>(0), rows, n);
  std::fill(s->acc.begin(), s->acc.end(), 0.0);
  float column[32];
  int8_t qt[32];
  for (int64_t ch = 0; ch < chunks; ++ch) {
    for (int64_t i = 0; i < 32; ++i) {
      decode_blocks(s->p.format, c.in_data<uint8_t>(1) + (32 * ch + i) * s->p.row_bytes, s->p.row_blocks, s->rows32.data() + i * k);
    }
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t i = 0; i < 32; ++i) column[i] = s->rows32[static_cast<size_t>(i * k + p)];
      const double st = pock_quantize_row_i8(column, 32, qt);
      for (int64_t r = 0; r < rows; ++r) {
        const int8_t* a = s->a.data() + r * n + 32 * ch;
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i) dot += int32_t{a[i]} * int32_t{qt[i]};
        s->acc[static_cast<size_t>(r * k + p)] += static_cast<double>(s->a_scale[static_cast<size_t>(r * chunks + ch)]) * st * dot;
      }
    }
  }
  float* dx = c.out_data<float>(0);
  for (size_t i = 0; i < s->acc.size(); ++i) dx[i] = static_cast<float>(s->acc[i]);
  return Status::ok();
}

// out[r, j] = row r of `x` (k values) times weight row j, for `rows` rows: exact or int8.
void head_logits(DecodedRow* s, const float* x, int64_t rows, const uint8_t* w, int64_t n, float* out) {
  const int64_t k = s->p.in_features, blocks = k / 32;
  if (s->p.int8) quantize_blocks(s, x, rows, k);
  for (int64_t j = 0; j < n; ++j) {
    const uint8_t* row = w + j * s->p.row_bytes;
    if (s->p.int8) {
      const int64_t block_bytes = block_layout(s->p.format).bytes;
      for (int64_t b = 0; b < blocks; ++b) block_int8_view(s->p.format, row + b * block_bytes, s->q.data() + 32 * b, &s->d[b], &s->m[b]);
    } else {
      decode_blocks(s->p.format, row, s->p.row_blocks, s->row.data());
    }
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0.0;
      for (int64_t b = 0; s->p.int8 && b < blocks; ++b) {
        int32_t dot = 0, sum = 0;
        for (int i = 0; i < 32; ++i) {
          dot += int32_t{s->a[static_cast<size_t>(r * k + 32 * b + i)]} * int32_t{s->q[static_cast<size_t>(32 * b + i)]};
          sum += s->a[static_cast<size_t>(r * k + 32 * b + i)];
        }
        acc += static_cast<double>(s->a_scale[static_cast<size_t>(r * blocks + b)]) *
               (static_cast<double>(s->d[b]) * dot + static_cast<double>(s->m[b]) * sum);
      }
      for (int64_t p = 0; !s->p.int8 && p < k; ++p) acc += static_cast<double>(x[r * k + p]) * s->row[static_cast<size_t>(p)];
      out[r * n + j] = static_cast<float>(acc);
    }
  }
}

// acc[r, p] += sum_j g[r, j] w[j, p] for `rows` rows: exact, or as LinearQInputGrad int8.
void head_input_grad(DecodedRow* s, const float* g, int64_t rows, const uint8_t* w, int64_t n) {
  const int64_t k = s->p.in_features;
  if (!s->p.int8) {
    for (int64_t j = 0; j < n; ++j) {
      decode_blocks(s->p.format, w + j * s->p.row_bytes, s->p.row_blocks, s->row.data());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t p = 0; p < k; ++p) s->acc[static_cast<size_t>(r * k + p)] += static_cast<double>(g[r * n + j]) * s->row[static_cast<size_t>(p)];
      }
    }
    return;
  }
  quantize_blocks(s, g, rows, n);
  float column[32];
  int8_t qt[32];
  for (int64_t ch = 0; ch < n / 32; ++ch) {
    for (int64_t i = 0; i < 32; ++i) decode_blocks(s->p.format, w + (32 * ch + i) * s->p.row_bytes, s->p.row_blocks, s->rows32.data() + i * k);
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t i = 0; i < 32; ++i) column[i] = s->rows32[static_cast<size_t>(i * k + p)];
      const double st = pock_quantize_row_i8(column, 32, qt);
      for (int64_t r = 0; r < rows; ++r) {
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i) dot += int32_t{s->a[static_cast<size_t>(r * n + 32 * ch + i)]} * int32_t{qt[i]};
        s->acc[static_cast<size_t>(r * k + p)] += static_cast<double>(s->a_scale[static_cast<size_t>(r * (n / 32) + ch)]) * st * dot;
      }
    }
  }
}

// SoftmaxCrossEntropy(LinearQ(x, w), labels) and its x gradient for dloss = 1, a chunk of rows
// at a time: the arithmetic of LinearQ, SoftmaxCrossEntropy(Grad) and LinearQInputGrad in turn.
Status linear_q_cross_entropy(const KernelCall& c) {
  auto* s = static_cast<DecodedRow*>(c.state);
  const int64_t k = s->p.in_features, n = c.in(1).dims[0];
  const int64_t rows = leading_rows(c.in(0));
  const int64_t* labels = c.in_data<int64_t>(2);
  const int64_t ignore = s->p.ignore_index;
  const double eps = s->p.label_smoothing;
  int64_t counted = 0;
  POCK_RETURN_IF_ERROR(params::count_labels(*c.desc, labels, rows, n, ignore, &counted));
  const bool grad = c.num_outputs() > 1;
  float* dx = grad ? c.out_data<float>(1) : nullptr;
  double total = 0.0;
  for (int64_t r0 = 0; r0 < rows; r0 += static_cast<int64_t>(kHeadChunk)) {
    const int64_t chunk = std::min<int64_t>(static_cast<int64_t>(kHeadChunk), rows - r0);
    float* z = s->logits.data();
    head_logits(s, c.in_data<float>(0) + r0 * k, chunk, c.in_data<uint8_t>(1), n, z);
    for (int64_t r = 0; r < chunk; ++r) {
      float* zr = z + r * n;
      const int64_t label = labels[r0 + r];
      if (label == ignore) {
        std::fill(zr, zr + n, 0.0f);
        continue;
      }
      double mx = zr[0], mean = 0.0, sum = 0.0;
      for (int64_t j = 0; j < n; ++j) mx = std::fmax(mx, static_cast<double>(zr[j]));
      for (int64_t j = 0; j < n; ++j) {
        sum += std::exp(zr[j] - mx);
        mean += zr[j];
      }
      const double lse = mx + std::log(sum);
      total += lse - (1.0 - eps) * zr[label] - eps * mean / static_cast<double>(n);
      for (int64_t j = 0; j < n; ++j) {
        const double target = (j == label ? 1.0 - eps : 0.0) + eps / static_cast<double>(n);
        zr[j] = static_cast<float>((std::exp(zr[j] - lse) - target) / static_cast<double>(counted));
      }
    }
    if (!grad) continue;
    std::fill(s->acc.begin(), s->acc.end(), 0.0);
    head_input_grad(s, z, chunk, c.in_data<uint8_t>(1), n);
    for (int64_t i = 0; i < chunk * k; ++i) dx[r0 * k + i] = static_cast<float>(s->acc[static_cast<size_t>(i)]);
  }
  *c.out_data<float>(0) = counted ? static_cast<float>(total / static_cast<double>(counted)) : 0.0f;
  return Status::ok();
}

int64_t index_at(const pock_tensor_desc& indices, int64_t i) {
  return indices.dtype == POCK_I32 ? static_cast<const int32_t*>(indices.data)[i]
                                   : static_cast<const int64_t*>(indices.data)[i];
}

// Every index is checked before anything is written, as Gather does.
Status gather_q(const KernelCall& c) {
  const auto* s = static_cast<const DecodedRow*>(c.state);
  const int64_t rows = c.in(0).dims[0], k = s->p.in_features;
  const int64_t count = numel(c.in(1));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = index_at(c.in(1), i);
    if (v < -rows || v >= rows) {
      return c.error("index " + std::to_string(v) + " at position " + std::to_string(i) + " is out of range [" +
                     std::to_string(-rows) + ", " + std::to_string(rows) + ")");
    }
  }
  float* y = c.out_data<float>(0);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = index_at(c.in(1), i);
    decode_blocks(s->p.format, c.in_data<uint8_t>(0) + (v < 0 ? v + rows : v) * s->p.row_bytes, s->p.row_blocks, y + i * k);
  }
  return Status::ok();
}

KernelDef def(const char* op, DType dtype, KernelFn run) { return {op, dtype, run, 1, prepare, release}; }

}  // namespace

void register_ref_block_quant(KernelTable& t) {
  t.add(def("LinearQ", DType::kF32, linear_q));
  t.add(def("LinearQInputGrad", DType::kF32, linear_q_input_grad));
  t.add(def("LinearQCrossEntropy", DType::kF32, linear_q_cross_entropy));
  t.add(def("GatherQ", DType::kU8, gather_q));
}

}  // namespace pock
