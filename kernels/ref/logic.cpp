// Reference kernels of the logic family: comparisons to bool on f32, f16, bf16, i8, u8, i32, i64
// (Equal on bool too), And/Or/Xor/Not on bool, BitShift on unsigned integers. Bool is one byte,
// 0 or 1. Element semantics: kernels/logic_ops.hpp.
#include <cstdint>

#include "kernels/logic_ops.hpp"
#include "kernels/params/logic.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

using ref::BFloat16;
using ref::Half;
using ref::Plain;

// y = Op(a, b) as bool, a and b broadcast.
template <typename Op, typename E>
Status to_bool(const KernelCall& c) {
  using S = typename E::Stored;
  const S* a = c.in_data<S>(0);
  const S* b = c.in_data<S>(1);
  uint8_t* y = c.out_data<uint8_t>(0);
  const pock_tensor_desc* ins[2] = {&c.in(0), &c.in(1)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) { y[o] = Op()(E::load(a[i]), E::load(b[j])); });
  return Status::ok();
}

Status negation(const KernelCall& c) {
  const uint8_t* x = c.in_data<uint8_t>(0);
  uint8_t* y = c.out_data<uint8_t>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = logic::Not()(x[i]);
  return Status::ok();
}

template <typename T>
Status bit_shift(const KernelCall& c, const params::BitShiftParams& p) {
  const T* x = c.in_data<T>(0);
  const T* n = c.in_data<T>(1);
  T* y = c.out_data<T>(0);
  const pock_tensor_desc* ins[2] = {&c.in(0), &c.in(1)};
  ref::for_each_broadcast<2>(c.out(0), ins, [&](int64_t o, int64_t i, int64_t j) {
    y[o] = p.left ? logic::shift_left(x[i], n[j]) : logic::shift_right(x[i], n[j]);
  });
  return Status::ok();
}

template <typename Op>
void add_comparison(KernelTable& t, const char* op) {
  t.add({op, DType::kF32, to_bool<Op, Plain<float>>});
  t.add({op, DType::kF16, to_bool<Op, Half>});
  t.add({op, DType::kBF16, to_bool<Op, BFloat16>});
  t.add({op, DType::kI8, to_bool<Op, Plain<int8_t>>});
  t.add({op, DType::kU8, to_bool<Op, Plain<uint8_t>>});
  t.add({op, DType::kI32, to_bool<Op, Plain<int32_t>>});
  t.add({op, DType::kI64, to_bool<Op, Plain<int64_t>>});
}

}  // namespace

void register_ref_logic(KernelTable& t) {
  add_comparison<logic::Equal>(t, "Equal");
  add_comparison<logic::Less>(t, "Less");
  add_comparison<logic::LessOrEqual>(t, "LessOrEqual");
  add_comparison<logic::Greater>(t, "Greater");
  add_comparison<logic::GreaterOrEqual>(t, "GreaterOrEqual");
  t.add({"Equal", DType::kBool, to_bool<logic::Equal, Plain<uint8_t>>});
  t.add({"And", DType::kBool, to_bool<logic::And, Plain<uint8_t>>});
  t.add({"Or", DType::kBool, to_bool<logic::Or, Plain<uint8_t>>});
  t.add({"Xor", DType::kBool, to_bool<logic::Xor, Plain<uint8_t>>});
  t.add({"Not", DType::kBool, negation});
  // One line per unsigned dtype (u16, u32, u64 when pock carries them).
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint8_t>>("BitShift", DType::kU8));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint16_t>>("BitShift", DType::kU16));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint32_t>>("BitShift", DType::kU32));
  t.add(typed_kernel<params::BitShiftParams, bit_shift<uint64_t>>("BitShift", DType::kU64));
}

}  // namespace pock
