// The cuda elementwise family: every op ref runs (kernels/ref/elementwise.cpp), with its dtypes.
// The element logic is elementwise_logic.hpp; here only plans (at prepare) and launches.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/element_width.hpp"
#include "kernels/cuda/elementwise_logic.hpp"
#include "kernels/cuda/float_map.cuh"
#include "kernels/cuda/planned_kernel.hpp"

namespace pock::cuda {
namespace {

template <typename Op>
Status unary(const KernelCall& c, const params::ActivationParams& p, const StridedIndex<1>& index) {
  return run_float_map<Op, 1>(c, index, unary_args(p));
}

template <typename Op>
Status binary(const KernelCall& c, const NoParams&, const StridedIndex<2>& index) {
  return run_float_map<Op, 2>(c, index, NoArgs{});
}

template <typename T>
Status where_width(const KernelCall& c, const StridedIndex<3>& index) {
  const WhereMap<T> map{c.in_data<uint8_t>(0), c.in_data<T>(1), c.in_data<T>(2), c.out_data<T>(0), index};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), map));
}

// The branches move, never computed on: one kernel per element width (where_accepts leaves
// out the 2-byte dtypes, as ref does).
Status where(const KernelCall& c, const NoParams&, const StridedIndex<3>& index) {
  return with_element_width(c.in(1).dtype, [&](auto t) { return where_width<decltype(t)>(c, index); });
}

bool where_accepts(const pock_op_desc& op) { return cast_dtype_supported(op.inputs[1].dtype); }

Status identity(const KernelCall& c) { return copy_input_to_output(c); }

// The unary and binary kernels write f32. A blob compiled for cpu in bf16 may have an activation
// or an Add, Sub, Mul or Div write the bf16 copy of a GEMM operand
// (src/compiler/lowering/bf16_producers.hpp): that op runs elsewhere.
bool f32_output_accepts(const pock_op_desc& op) { return op.outputs[0].dtype == POCK_F32; }

bool cast_accepts(const pock_op_desc& op) {
  return cast_dtype_supported(op.inputs[0].dtype) && cast_dtype_supported(op.outputs[0].dtype);
}

Status cast(const KernelCall& c) {
  if (c.in(0).dtype == c.out(0).dtype) return copy_input_to_output(c);
  const CastMap map{c.in(0).data, c.out(0).data, c.in(0).dtype, c.out(0).dtype};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), map));
}

}  // namespace

void register_elementwise(KernelTable& t) {
#define POCK_ADD_UNARY(name, Op) \
  t.add(planned_kernel<params::ActivationParams, StridedIndex<1>, plan_broadcast<1>, unary<Op>>(name, DType::kF32, \
                                                                                              f32_output_accepts));
  POCK_CUDA_UNARY_OPS(POCK_ADD_UNARY)
#undef POCK_ADD_UNARY
#define POCK_ADD_BINARY(name, Op) \
  t.add(planned_kernel<NoParams, StridedIndex<2>, plan_broadcast<2>, binary<Op>>(name, DType::kF32, f32_output_accepts));
  POCK_CUDA_BINARY_OPS(POCK_ADD_BINARY)
#undef POCK_ADD_BINARY
  t.add(planned_kernel<NoParams, StridedIndex<3>, plan_broadcast<3>, where>("Where", DType::kBool, where_accepts));
  for (DType dt : {DType::kF32, DType::kI32, DType::kI64, DType::kI8, DType::kU8, DType::kBool}) {
    t.add({"Identity", dt, identity});
    KernelDef def{"Cast", dt, cast};
    def.accepts = cast_accepts;
    t.add(def);
  }
}

}  // namespace pock::cuda
