// The cuda shape family, every op and dtype ref has: the views (Reshape, Flatten, Squeeze,
// Unsqueeze) and Copy as one device copy, Transpose/Slice/Expand as one gather (16 bytes a thread
// where the innermost walk allows; shared-memory tiles for transposes that move the innermost dim),
// Pad, and Concat/Split as one scatter or gather per piece. Logic: shape_logic.hpp.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/element_width.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/planned_kernel.hpp"
#include "kernels/cuda/shape_logic.hpp"

namespace pock::cuda {
namespace {

Status copy_bytes(const KernelCall& c) { return copy_input_to_output(c); }

struct TransposePlan {
  MovePlan gather;
  TileTranspose tiles;
  bool tiled = false;
};

Status plan_transpose(const pock_op_desc& op, const params::ShapeParams& p, TransposePlan* plan) {
  const StridedIndex<1> index = transpose_index(op.inputs[0], op.outputs[0], p);
  plan->gather = move_plan(index, dtype_size(static_cast<DType>(op.outputs[0].dtype)));
  plan->tiled = tile_transpose(index, &plan->tiles);
  return Status::ok();
}

Status plan_slice(const pock_op_desc& op, const params::ShapeParams& p, MovePlan* plan) {
  *plan = move_plan(slice_index(op.inputs[0], op.outputs[0], p), dtype_size(static_cast<DType>(op.outputs[0].dtype)));
  return Status::ok();
}

Status plan_expand(const pock_op_desc& op, const params::ShapeParams& p, MovePlan* plan) {
  StridedIndex<1> index;
  POCK_RETURN_IF_ERROR(plan_broadcast<1>(op, p, &index));
  *plan = move_plan(index, dtype_size(static_cast<DType>(op.outputs[0].dtype)));
  return Status::ok();
}

// Transpose, Slice and Expand differ only in their index: five kernels (1 to 16 bytes a move)
// serve all three.
Status gather(const KernelCall& c, const params::ShapeParams&, const MovePlan& plan) {
  const MoveLaunch l = move_launch(plan, dtype_size(static_cast<DType>(c.out(0).dtype)), c.in(0).data, c.out(0).data,
                                   numel(c.out(0)));
  return with_move_width(l.bytes, [&](auto t) {
    using T = decltype(t);
    return launched(c, launch_map(l.moves, current_stream(), GatherMap<T>{c.in_data<T>(0), c.out_data<T>(0), *l.index}));
  });
}

// A 32 x 8 block per tile: each thread moves 4 elements in and 4 out.
template <typename T>
__global__ void __launch_bounds__(kTile * 8) transpose_tiles_kernel(const T* in, T* out, TileTranspose p) {
  __shared__ T tile[kTile][kTile + 1];  // +1: the column reads of the store step hit distinct banks
  const int x = threadIdx.x;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const TileOrigin o = p.origin(t);
    int64_t off;
    for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
      if (p.load_at(o, x, k, &off)) tile[k][x] = in[off];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
      if (p.store_at(o, x, k, &off)) out[off] = tile[x][k];
    }
    __syncthreads();
  }
}

Status transpose(const KernelCall& c, const params::ShapeParams& p, const TransposePlan& plan) {
  if (!plan.tiled) return gather(c, p, plan.gather);
  if (plan.tiles.tiles == 0) return Status::ok();
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(plan.tiles.tiles, 65535));
  return with_element_width(c.out(0).dtype, [&](auto t) {
    using T = decltype(t);
    transpose_tiles_kernel<T><<<blocks, dim3(kTile, 8), 0, current_stream()>>>(c.in_data<T>(0), c.out_data<T>(0), plan.tiles);
    return launched(c, cudaGetLastError());
  });
}

Status plan_pad(const pock_op_desc& op, const params::ShapeParams& p, PadPlan* plan) {
  *plan = pad_plan(op.inputs[0], op.outputs[0], p);
  return Status::ok();
}

template <typename T>
Status pad_width(const KernelCall& c, const PadPlan& plan) {
  return launched(c, launch_map(numel(c.out(0)), current_stream(), pad_map<T>(c.in(0).data, c.out(0).data, plan)));
}

// The plan fills the border with the constant; reflect and edge padding run on a host backend.
bool constant_pad_accepts(const pock_op_desc& op) {
  params::ShapeParams p;
  return params::parse(op, &p).is_ok() && p.pad_mode == params::PadMode::kConstant;
}

Status pad(const KernelCall& c, const params::ShapeParams&, const PadPlan& plan) {
  return with_element_width(c.out(0).dtype, [&](auto t) { return pad_width<decltype(t)>(c, plan); });
}

using PieceMoves = std::vector<MovePlan>;

Status plan_concat(const pock_op_desc& op, const params::ShapeParams& p, PieceMoves* moves) {
  *moves = piece_moves(op.outputs[0], op.inputs, op.num_inputs, p.axis);
  return Status::ok();
}

Status plan_split(const pock_op_desc& op, const params::ShapeParams& p, PieceMoves* moves) {
  *moves = piece_moves(op.inputs[0], op.outputs, op.num_outputs, p.axis);
  return Status::ok();
}

// One launch per piece: into the joined tensor (Concat) or out of it (Split).
Status move_pieces(const KernelCall& c, const PieceMoves& moves, bool into_joined) {
  const pock_tensor_desc& joined = into_joined ? c.out(0) : c.in(0);
  const size_t element = dtype_size(static_cast<DType>(joined.dtype));
  for (size_t i = 0; i < moves.size(); ++i) {
    const pock_tensor_desc& piece = into_joined ? c.in(static_cast<int>(i)) : c.out(static_cast<int>(i));
    const MoveLaunch l = move_launch(moves[i], element, piece.data, joined.data, numel(piece));
    POCK_RETURN_IF_ERROR(with_move_width(l.bytes, [&](auto t) {
      using T = decltype(t);
      auto* whole = static_cast<T*>(joined.data);
      auto* part = static_cast<T*>(piece.data);
      return launched(c, into_joined ? launch_map(l.moves, current_stream(), ScatterMap<T>{part, whole, *l.index})
                                     : launch_map(l.moves, current_stream(), GatherMap<T>{whole, part, *l.index}));
    }));
  }
  return Status::ok();
}

Status concat(const KernelCall& c, const params::ShapeParams&, const PieceMoves& moves) { return move_pieces(c, moves, true); }

Status split(const KernelCall& c, const params::ShapeParams&, const PieceMoves& moves) { return move_pieces(c, moves, false); }

// Moves elements of one dtype: not a Transpose that writes the bf16 copy of a GEMM operand
// (output_dtype "bf16", src/compiler/lowering/bf16_producers.hpp), which runs elsewhere.
bool same_dtype_accepts(const pock_op_desc& op) { return op.inputs[0].dtype == op.outputs[0].dtype; }

}  // namespace

void register_shape(KernelTable& t) {
  using params::ShapeParams;
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType dt = static_cast<DType>(i);
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Copy"}) t.add({op, dt, copy_bytes});
    t.add(planned_kernel<ShapeParams, TransposePlan, plan_transpose, transpose>("Transpose", dt, same_dtype_accepts));
    t.add(planned_kernel<ShapeParams, MovePlan, plan_slice, gather>("Slice", dt));
    t.add(planned_kernel<ShapeParams, MovePlan, plan_expand, gather>("Expand", dt));
    t.add(planned_kernel<ShapeParams, PadPlan, plan_pad, pad>("Pad", dt, constant_pad_accepts));
    t.add(planned_kernel<ShapeParams, PieceMoves, plan_concat, concat>("Concat", dt));
    t.add(planned_kernel<ShapeParams, PieceMoves, plan_split, split>("Split", dt));
  }
}

}  // namespace pock::cuda
