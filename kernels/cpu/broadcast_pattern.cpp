#include "kernels/cpu/broadcast_pattern.hpp"

#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {

BroadcastPattern broadcast_pattern(const pock_tensor_desc& in, const pock_tensor_desc& out, int64_t* inner) {
  const int64_t n = numel(in);
  if (n == numel(out)) return BroadcastPattern::kFull;  // broadcasting only grows: equal counts, same order
  if (n == 1) return BroadcastPattern::kScalar;
  int lead = 0;
  while (lead < in.rank && in.dims[lead] == 1) ++lead;  // leading 1s broadcast like missing dims
  int ones = 0;  // trailing 1s: the block below them is a channel block
  while (ones < in.rank - lead && in.dims[in.rank - 1 - ones] == 1) ++ones;
  const int block = in.rank - lead - ones;
  if (block + ones > out.rank) return BroadcastPattern::kOther;
  for (int i = 0; i < block; ++i) {
    if (in.dims[lead + i] != out.dims[out.rank - ones - block + i]) return BroadcastPattern::kOther;
  }
  if (ones == 0) return BroadcastPattern::kRow;
  if (inner) *inner = dims_product(out, out.rank - ones, out.rank);
  return BroadcastPattern::kChannel;
}

bool run_patterns(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& y) {
  const BroadcastPattern pa = broadcast_pattern(a, y), pb = broadcast_pattern(b, y);
  auto handled = [&](BroadcastPattern p) {
    return p != BroadcastPattern::kOther && p != BroadcastPattern::kChannel;
  };
  if (!handled(pa) || !handled(pb)) return false;
  return pa == BroadcastPattern::kFull || pb == BroadcastPattern::kFull;
}

bool binary_pattern_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  return is_f32(a) && is_f32(b) && is_f32(y) && run_patterns(a, b, y);
}

}  // namespace pock::cpu
