#include "ir/ops/conv_algorithm_attr.hpp"

#include <string>
#include <variant>

#include "ir/conv_algorithm.hpp"

namespace pock::schema {

Status require_conv_algorithm(const InferContext& ctx) {
  const AttrValue* value = ctx.attrs->find(kConvAlgorithmAttr);
  if (!value) return Status::ok();
  const auto* name = std::get_if<std::string>(value);
  if (name && parse_conv_algorithm(*name)) return Status::ok();
  // A hostile blob's string may be long: the message quotes its start.
  const std::string got = name ? "\"" + name->substr(0, 64) + "\"" : std::string("not a string");
  return ctx.error(std::string("attribute '") + kConvAlgorithmAttr + "' must be " + kConvAlgorithmNames +
                   " (written by 'pockc compile --profile'), got " + got);
}

}  // namespace pock::schema
