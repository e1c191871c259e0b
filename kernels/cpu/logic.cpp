// cpu kernels of the logic family: comparisons to bool on f32, i8, u8, i32, i64 (Equal on bool
// too), And/Or/Xor/Not on bool, BitShift on unsigned integers. Any numpy broadcast walks the
// output in rows (strided_walk.hpp); each row pairs a contiguous, constant or strided run of each
// operand, and the contiguous and constant cases get loops of their own, which the compiler
// vectorizes. f16 and bf16 comparisons stay on ref (they are rare, and masks come from f32, i64).
// Element semantics: kernels/logic_ops.hpp, as in every backend.
#include <cstdint>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/strided_walk.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/logic_ops.hpp"
#include "kernels/params/logic.hpp"

namespace pock::cpu {
namespace {

// Below this many elements a loop is not worth handing to the pool.
constexpr size_t kMinParallelElements = size_t{1} << 15;

// y[i] = op(a[i * sa], b[i * sb]) for i < n, with strides 1 or 0 handled by their own loops.
template <typename T, typename Y, typename Op>
void binary_row(const T* a, int64_t sa, const T* b, int64_t sb, Y* y, int64_t n, const Op& op) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Y>(op(a[i], b[i]));
  } else if (sa == 1 && sb == 0) {
    const T v = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Y>(op(a[i], v));
  } else if (sa == 0 && sb == 1) {
    const T v = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Y>(op(v, b[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<Y>(op(a[i * sa], b[i * sb]));
  }
}

// The output of a broadcast binary op, walked in rows split over the thread pool.
template <typename T, typename Y, typename Op>
void binary_walk(const KernelCall& c, const Op& op) {
  const StridedWalk w = binary_broadcast_walk(c);
  const T* a = c.in_data<T>(0);
  const T* b = c.in_data<T>(1);
  Y* y = c.out_data<Y>(0);
  const int64_t sa = w.inner_stride(0), sb = w.inner_stride(1);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  for_each_row_parallel(w, pool, kMinParallelElements / 4, [&](int64_t o, const int64_t* in) {
    binary_row(a + in[0], sa, b + in[1], sb, y + o, w.inner(), op);
  });
}

bool binary_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  return a.dtype == b.dtype && y.rank <= kWalkMaxRank && a.rank <= y.rank && b.rank <= y.rank;
}

template <typename T, typename Op>
Status to_bool(const KernelCall& c) {
  binary_walk<T, uint8_t>(c, Op());
  return Status::ok();
}

Status negation(const KernelCall& c) {
  const uint8_t* x = c.in_data<uint8_t>(0);
  uint8_t* y = c.out_data<uint8_t>(0);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = logic::Not()(x[i]);
  });
  return Status::ok();
}

template <typename T>
Status bit_shift(const KernelCall& c, const params::BitShiftParams& p) {
  if (p.left) binary_walk<T, T>(c, [](T x, T n) { return logic::shift_left(x, n); });
  else binary_walk<T, T>(c, [](T x, T n) { return logic::shift_right(x, n); });
  return Status::ok();
}

KernelDef kernel(const char* op, DType dtype, KernelFn run) {
  KernelDef d{op, dtype, run, kCpuScore};
  d.accepts = binary_accepts;
  return d;
}

template <typename Op>
void add_comparison(KernelTable& t, const char* op) {
  t.add(kernel(op, DType::kF32, to_bool<float, Op>));
  t.add(kernel(op, DType::kI8, to_bool<int8_t, Op>));
  t.add(kernel(op, DType::kU8, to_bool<uint8_t, Op>));
  t.add(kernel(op, DType::kI32, to_bool<int32_t, Op>));
  t.add(kernel(op, DType::kI64, to_bool<int64_t, Op>));
}

}  // namespace

void register_logic(KernelTable& t) {
  add_comparison<logic::Equal>(t, "Equal");
  add_comparison<logic::Less>(t, "Less");
  add_comparison<logic::LessOrEqual>(t, "LessOrEqual");
  add_comparison<logic::Greater>(t, "Greater");
  add_comparison<logic::GreaterOrEqual>(t, "GreaterOrEqual");
  t.add(kernel("Equal", DType::kBool, to_bool<uint8_t, logic::Equal>));
  t.add(kernel("And", DType::kBool, to_bool<uint8_t, logic::And>));
  t.add(kernel("Or", DType::kBool, to_bool<uint8_t, logic::Or>));
  t.add(kernel("Xor", DType::kBool, to_bool<uint8_t, logic::Xor>));
  t.add({"Not", DType::kBool, negation, kCpuScore});
  // One line per unsigned dtype (u16, u32, u64 when pock carries them).
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint8_t>>("BitShift", DType::kU8, kCpuScore, binary_accepts));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint16_t>>("BitShift", DType::kU16, kCpuScore, binary_accepts));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint32_t>>("BitShift", DType::kU32, kCpuScore, binary_accepts));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint64_t>>("BitShift", DType::kU64, kCpuScore, binary_accepts));
}

}  // namespace pock::cpu
