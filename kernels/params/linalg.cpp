#include "kernels/params/linalg.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, MatMulParams* out) {
  AttrReader r(op);
  out->transpose_a = r.integer("transpose_a", 0) != 0;
  out->transpose_b = r.integer("transpose_b", 0) != 0;
  const std::string_view activation = r.text("activation", "none");
  const std::optional<Activation> parsed = parse_activation(activation);
  if (!parsed) r.invalid("activation", "is '" + std::string(activation) + "', not none, relu or relu6");
  out->activation = parsed.value_or(Activation::kNone);
  return r.status();
}

}  // namespace pock::params
