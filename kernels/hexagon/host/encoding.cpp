#include "encoding.hpp"

#include <cstring>

namespace pock::hexagon {

EncodeFn find_encoder(const char* op) {
  static const OpEncoder* const kFamilies[] = {kLinalgEncoders, kElementwiseEncoders, kElementwiseGradEncoders,
                                               kActivationMaskEncoders, kTrainingEncoders,  kConvEncoders,
                                               kLayerGradConvEncoders};
  for (const OpEncoder* family : kFamilies) {
    for (const OpEncoder* e = family; e->op; ++e) {
      if (std::strcmp(e->op, op) == 0) return e->encode;
    }
  }
  return nullptr;
}

int64_t numel(const pock_tensor_desc& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

bool is_f32(const pock_tensor_desc& t) { return t.dtype == POCK_F32; }

uint32_t activation_flags(Activation activation) {
  return activation == Activation::kRelu ? HX_FLAG_ACT_RELU : activation == Activation::kRelu6 ? HX_FLAG_ACT_RELU6 : 0u;
}

bool fits_u32(int64_t v) { return v >= 0 && v <= static_cast<int64_t>(UINT32_MAX); }

int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t n = 1;
  for (int i = 0; i + 1 < t.rank; ++i) n *= t.dims[i];
  return n;
}

int64_t last_dim(const pock_tensor_desc& t) { return t.rank >= 1 ? t.dims[t.rank - 1] : 1; }

bool has_input(const pock_op_desc& op, int i) { return i < op.num_inputs && op.inputs[i].rank >= 0; }

bool arity(const pock_op_desc& op, int min_in, int max_in, int outputs, uint32_t non_f32) {
  if (op.num_inputs < min_in || op.num_inputs > max_in || op.num_outputs != outputs) return false;
  for (int i = 0; i < min_in; ++i) {
    if (!has_input(op, i)) return false;
  }
  for (int i = 0; i < op.num_inputs; ++i) {
    if (has_input(op, i) && !(non_f32 & (1u << i)) && !is_f32(op.inputs[i])) return false;
  }
  for (int i = 0; i < op.num_outputs; ++i) {
    if (!is_f32(op.outputs[i])) return false;
  }
  return true;
}

void from_input(Encoding* e, int slot, int input) { e->source[slot] = static_cast<int8_t>(input); }
void from_output(Encoding* e, int slot, int output) { e->source[slot] = static_cast<int8_t>(kOutput + output); }

}  // namespace pock::hexagon
