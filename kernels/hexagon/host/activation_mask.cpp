// The activation_mask family on the DSP: ClipMask (f32 -> u8 mask) and MaskGrad.
#include "encoding.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::hexagon {
namespace {

// A bound that float cannot hold exactly would compare differently from kernels/ref's double
// comparison at the bound itself: such masks stay on the host.
bool exact_in_float(double v) { return static_cast<double>(static_cast<float>(v)) == v; }

bool encode_clip_mask(const pock_op_desc& op, Encoding* e) {
  if (op.num_inputs != 1 || op.num_outputs != 1 || !has_input(op, 0) || !is_f32(op.inputs[0])) return false;
  if (op.outputs[0].dtype != POCK_U8 && op.outputs[0].dtype != POCK_BOOL) return false;
  const int64_t n = numel(op.outputs[0]);
  if (numel(op.inputs[0]) != n || !fits_u32(n)) return false;
  params::ActivationParams p;
  if (!params::parse(op, &p).is_ok() || !exact_in_float(p.lo) || !exact_in_float(p.hi)) return false;
  hx_op& r = e->record;
  r.opcode = HX_OP_CLIP_MASK;
  r.flags = (p.inclusive ? HX_FLAG_INCLUSIVE : 0u) | (p.has_lo ? HX_FLAG_HAS_LO : 0u) | (p.has_hi ? HX_FLAG_HAS_HI : 0u);
  r.dim[0] = static_cast<uint32_t>(n);
  r.param[0] = static_cast<float>(p.lo);
  r.param[1] = static_cast<float>(p.hi);
  from_input(e, 0, 0);
  from_output(e, 3, 0);
  return true;
}

bool encode_mask_grad(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1, /*non_f32=*/1u << 1)) return false;
  if (op.inputs[1].dtype != POCK_U8 && op.inputs[1].dtype != POCK_BOOL) return false;
  const int64_t n = numel(op.outputs[0]);
  if (numel(op.inputs[0]) != n || numel(op.inputs[1]) != n || !fits_u32(n)) return false;
  e->record.opcode = HX_OP_MASK_GRAD;
  e->record.dim[0] = static_cast<uint32_t>(n);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

}  // namespace

const OpEncoder kActivationMaskEncoders[] = {
    {"ClipMask", encode_clip_mask},
    {"MaskGrad", encode_mask_grad},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
