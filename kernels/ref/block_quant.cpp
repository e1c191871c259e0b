// Reference kernels of the block_quant family: each weight row decoded with the shared block
// decoder (ir/block_format.hpp), then the f32 math with double accumulation, as ref's Linear.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <new>
#include <vector>

#include "kernels/params/block_quant.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// The parameters and one decoded weight row, made at prepare so that a step allocates nothing.
struct DecodedRow {
  params::BlockQuantParams p;
  std::vector<float> row;
  std::vector<double> acc;  // LinearQInputGrad: dx summed in double
};

Status prepare(const pock_op_desc& op, void** state) {
  auto s = std::unique_ptr<DecodedRow>(new (std::nothrow) DecodedRow{});
  if (!s) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': no memory for its state");
  POCK_RETURN_IF_ERROR(params::parse(op, &s->p));
  s->row.resize(static_cast<size_t>(s->p.in_features));
  if (std::string_view(op.op) == "LinearQInputGrad") s->acc.resize(static_cast<size_t>(numel(op.outputs[0])));
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
Status linear_q(const KernelCall& c) {
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
  t.add(def("GatherQ", DType::kU8, gather_q));
}

}  // namespace pock
