#include "kernels/cpu/broadcast_pattern.hpp"

#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {

BroadcastPattern broadcast_pattern(const pock_tensor_desc& in, const pock_tensor_desc& out) {
  const int64_t n = numel(in);
  if (n == numel(out)) return BroadcastPattern::kFull;  // broadcasting only grows: equal counts, same order
  if (n == 1) return BroadcastPattern::kScalar;
  int lead = 0;
  while (lead < in.rank && in.dims[lead] == 1) ++lead;  // leading 1s broadcast like missing dims
  const int trailing = in.rank - lead;
  if (trailing > out.rank) return BroadcastPattern::kOther;
  for (int i = 0; i < trailing; ++i) {
    if (in.dims[lead + i] != out.dims[out.rank - trailing + i]) return BroadcastPattern::kOther;
  }
  return BroadcastPattern::kRow;
}

bool binary_pattern_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  if (!is_f32(a) || !is_f32(b) || !is_f32(y)) return false;
  const BroadcastPattern pa = broadcast_pattern(a, y), pb = broadcast_pattern(b, y);
  if (pa == BroadcastPattern::kOther || pb == BroadcastPattern::kOther) return false;
  return pa == BroadcastPattern::kFull || pb == BroadcastPattern::kFull;
}

}  // namespace pock::cpu
