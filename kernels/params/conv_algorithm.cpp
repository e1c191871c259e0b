#include "kernels/params/conv_algorithm.hpp"

#include <string>
#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, std::optional<ConvAlgorithm>* out) {
  AttrReader r(op);
  const std::string_view name = r.text(kConvAlgorithmAttr, "");
  *out = std::nullopt;
  if (!r.status().is_ok() || name.empty()) return r.status();
  *out = parse_conv_algorithm(name);
  if (!*out) r.invalid(kConvAlgorithmAttr, "is '" + std::string(name.substr(0, 64)) + "', not " + kConvAlgorithmNames);
  return r.status();
}

}  // namespace pock::params
