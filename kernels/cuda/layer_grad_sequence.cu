// The CUDA sequence backward ops: GatherGrad (the indices' (row, position) pairs radix-sorted by
// row with CUB, stably, then every run summed in position order: ref's sums bit for bit, the
// same on every run, no atomics) and DropoutGrad (element-wise). Logic in sequence_logic.hpp,
// checked on the host by tests/cuda_logic/test_sequence_logic.cpp.
#include <cub/device/device_radix_sort.cuh>

#include <climits>
#include <memory>
#include <new>

#include "kernels/cuda/checked_kernel.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/scratch_layout.hpp"
#include "kernels/cuda/sequence_logic.hpp"
#include "kernels/params/sequence.hpp"

namespace pock::cuda {
namespace {

// GatherGrad's workspace: the (row, position) pairs before and after the sort, and CUB's scratch.
struct SortPieces {
  uint32_t* rows_in;
  uint32_t* rows;
  int32_t* positions_in;
  int32_t* positions;
  void* sort_scratch;
  size_t sort_bytes;
};

// The bits that hold every row, the sentinel `extent` included.
int row_bits(int64_t extent) {
  int bits = 1;
  while (bits < 32 && (int64_t{1} << bits) <= extent) ++bits;
  return bits;
}

cudaError_t sort_pairs(void* scratch, size_t& bytes, const SortPieces& p, int64_t count, int64_t extent,
                       cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(scratch, bytes, p.rows_in, p.rows, p.positions_in, p.positions,
                                         static_cast<int>(count), 0, row_bits(extent), stream);
}

// With a null base, measures (CUB's scratch included).
Status sort_pieces(const pock_op_desc& op, const GatherLayout& l, void* base, SortPieces* out) {
  ScratchLayout layout{static_cast<char*>(base)};
  SortPieces p{};
  p.rows_in = layout.take<uint32_t>(l.count);
  p.rows = layout.take<uint32_t>(l.count);
  p.positions_in = layout.take<int32_t>(l.count);
  p.positions = layout.take<int32_t>(l.count);
  if (l.count > 0) {
    const cudaError_t e = sort_pairs(nullptr, p.sort_bytes, p, l.count, l.extent, nullptr);
    if (e != cudaSuccess) return check(e, std::string(op.op) + " '" + op.name + "': sort scratch");
  }
  p.sort_scratch = layout.take<char>(static_cast<int64_t>(p.sort_bytes));
  *out = p;
  return base ? Status::ok() : reserve_workspace(layout.bytes());
}

GatherLayout grad_layout(const pock_op_desc& op, const params::SequenceParams& p) {
  const pock_tensor_desc& dx = op.outputs[0];
  return gather_layout(dx.dims, dx.rank, p.axis, numel(op.inputs[1]));
}

// Rows and positions must fit the sort's 32-bit keys and values.
bool gather_grad_fits(const pock_op_desc& op) {
  params::SequenceParams p;
  if (!parse(op, &p).is_ok()) return false;
  const GatherLayout l = grad_layout(op, p);
  return l.extent < INT_MAX && l.count < INT_MAX;
}

// ref's words for an index outside the axis (ref refuses it; here its dy rows are skipped).
std::string gather_grad_index_error(const pock_op_desc& op, const params::SequenceParams& p) {
  return "an index is out of range for axis extent " + std::to_string(grad_layout(op, p).extent);
}

Status prepare_gather_grad(const pock_op_desc& op, void** state) {
  std::unique_ptr<Checked<params::SequenceParams>> s;
  POCK_RETURN_IF_ERROR(prepare_checked<params::SequenceParams>(op, gather_grad_index_error, &s));
  SortPieces pieces;
  POCK_RETURN_IF_ERROR(sort_pieces(op, grad_layout(op, s->params), nullptr, &pieces));
  *state = s.release();
  return Status::ok();
}

template <typename Index>
cudaError_t launch_keys(const KernelCall& c, const GatherLayout& l, const SortPieces& p, ErrorSite error) {
  const GatherGradKeys<Index> keys{c.in_data<Index>(1), l.extent, p.rows_in, p.positions_in, error};
  return launch_map(l.count, current_stream(), keys);
}

// GatherGrad(dy, indices) -> ddata: zeros, then each indexed row the sum of its dy rows.
Status gather_grad(const KernelCall& c) {
  const auto& state = *static_cast<const Checked<params::SequenceParams>*>(c.state);
  const GatherLayout l = grad_layout(*c.desc, state.params);
  const pock_tensor_desc& dx = c.out(0);
  POCK_RETURN_IF_ERROR(launched(c, cudaMemsetAsync(dx.data, 0, dx.nbytes, current_stream())));
  if (l.count == 0) return Status::ok();
  SortPieces p;
  POCK_RETURN_IF_ERROR(sort_pieces(*c.desc, l, workspace(), &p));
  const ErrorSite error = state.error();
  POCK_RETURN_IF_ERROR(launched(c, c.in(1).dtype == POCK_I32 ? launch_keys<int32_t>(c, l, p, error)
                                                             : launch_keys<int64_t>(c, l, p, error)));
  POCK_RETURN_IF_ERROR(launched(c, sort_pairs(p.sort_scratch, p.sort_bytes, p, l.count, l.extent, current_stream())));
  const GatherGradRuns runs{p.rows, p.positions, c.in_data<float>(0), c.out_data<float>(0), l};
  return launched(c, launch_map(l.outer * l.count * l.inner, current_stream(), runs));
}

Status dropout_grad(const KernelCall& c, const params::SequenceParams& p) {
  const DropoutGradElement element{c.in_data<float>(0), c.in_data<uint8_t>(1), c.out_data<float>(0),
                                   1.0 / (1.0 - p.ratio)};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

}  // namespace

void register_layer_grad_sequence(KernelTable& t) {
  KernelDef grad;
  grad.op = "GatherGrad";
  grad.dtype = DType::kF32;
  grad.run = gather_grad;
  grad.prepare = prepare_gather_grad;
  grad.release = [](void* state) { delete static_cast<Checked<params::SequenceParams>*>(state); };
  grad.accepts = gather_grad_fits;
  t.add(grad);
  t.add(typed_kernel<params::SequenceParams, dropout_grad>("DropoutGrad", DType::kF32));
}

}  // namespace pock::cuda
