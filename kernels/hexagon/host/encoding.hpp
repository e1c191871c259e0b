// How an op of the graph becomes an hx_op record for the DSP. One encoder per op type, in the
// file of the op's family (linalg.cpp, elementwise.cpp, ... as in kernels/ref): it decides
// whether the DSP runs the op as described (dtypes, shapes, attributes — through the typed
// parameters of kernels/params, the parser every backend shares) and fills the record's
// opcode, flags, sizes and scalars. supports_op and prepare_op call the same encoder, so what the
// compiler is told and what the DSP is sent cannot disagree. Tensor offsets come at prepare,
// when the tensors have their place in the shared region: `source` says which tensor goes to
// which record slot.
#pragma once
#include <cstdint>

#include "../hx_wire.h"
#include "ir/activation.hpp"
#include "pock/backend.h"

namespace pock::hexagon {

constexpr int8_t kNoTensor = -1;
constexpr int8_t kOutput = 16;  // source value kOutput + i: the op's output i; 0..15: input i

struct Encoding {
  hx_op record{};
  int8_t source[HX_MAX_TENSORS] = {kNoTensor, kNoTensor, kNoTensor, kNoTensor, kNoTensor, kNoTensor};
};

// false: the DSP does not run this op as described (the encoding is then meaningless).
using EncodeFn = bool (*)(const pock_op_desc& op, Encoding* out);

struct OpEncoder {
  const char* op;
  EncodeFn encode;
};

// One list per family file; each ends with {nullptr, nullptr}.
extern const OpEncoder kLinalgEncoders[];
extern const OpEncoder kElementwiseEncoders[];
extern const OpEncoder kElementwiseGradEncoders[];
extern const OpEncoder kActivationMaskEncoders[];
extern const OpEncoder kTrainingEncoders[];
extern const OpEncoder kConvEncoders[];
extern const OpEncoder kLayerGradConvEncoders[];

// The encoder of op type `op`, nullptr when the DSP has none.
EncodeFn find_encoder(const char* op);

// Shared checks.
int64_t numel(const pock_tensor_desc& t);
bool is_f32(const pock_tensor_desc& t);
bool fits_u32(int64_t v);
// Element count of all dims but the last (1 for rank <= 1).
int64_t leading_rows(const pock_tensor_desc& t);
int64_t last_dim(const pock_tensor_desc& t);
// The op has between min and max inputs and exactly `outputs` outputs, every present one f32
// except the inputs listed in `non_f32` (a bitmask of input indices).
bool arity(const pock_op_desc& op, int min_in, int max_in, int outputs, uint32_t non_f32 = 0);
bool has_input(const pock_op_desc& op, int i);
// HX_FLAG_ACT_* of a fused epilogue; Linear and pointwise Conv2d have the same three.
uint32_t activation_flags(Activation activation);
// Fills record slot `slot` from input `input` / output `output`.
void from_input(Encoding* e, int slot, int input);
void from_output(Encoding* e, int slot, int output);

}  // namespace pock::hexagon
