#include "runtime/kernel.hpp"

namespace pock {

void KernelTable::add(const KernelDef& def) { by_op_[def.op].push_back(def); }

const KernelDef* KernelTable::find(std::string_view op, DType dtype) const {
  auto it = by_op_.find(std::string(op));
  if (it == by_op_.end()) return nullptr;
  for (const KernelDef& def : it->second) {
    if (def.dtype == dtype) return &def;
  }
  return nullptr;
}

std::vector<const KernelDef*> KernelTable::all() const {
  std::vector<const KernelDef*> out;
  for (const auto& kv : by_op_) {
    for (const KernelDef& def : kv.second) out.push_back(&def);
  }
  return out;
}

DType kernel_key_dtype(const pock_op_desc& op) {
  for (int i = 0; i < op.num_inputs; ++i) {
    if (op.inputs[i].data != nullptr || op.inputs[i].rank >= 0) return static_cast<DType>(op.inputs[i].dtype);
  }
  if (op.num_outputs > 0) return static_cast<DType>(op.outputs[0].dtype);
  return DType::kF32;
}

}  // namespace pock
