#include "kernels/params/linalg.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, MatMulParams* out) {
  AttrReader r(op);
  out->transpose_a = r.integer("transpose_a", 0) != 0;
  out->transpose_b = r.integer("transpose_b", 0) != 0;
  out->activation = r.activation();
  const std::string_view compute = r.text("compute", "f32");
  if (compute != "f32" && compute != "bf16") r.invalid("compute", "is '" + std::string(compute) + "', not f32 or bf16");
  out->bf16 = compute == "bf16";
  const std::string_view weight = r.text("bf16_weight", "own");
  if (weight != "own" && weight != "keep" && weight != "kept") {
    r.invalid("bf16_weight", "is '" + std::string(weight) + "', not own, keep or kept");
  }
  out->bf16_weight = weight == "keep" ? Bf16Weight::kKeep : weight == "kept" ? Bf16Weight::kKept : Bf16Weight::kOwn;
  return r.status();
}

bool is_f32_gemm(const pock_op_desc& op) {
  MatMulParams p;
  return parse(op, &p).is_ok() && !p.bf16;
}

}  // namespace pock::params
