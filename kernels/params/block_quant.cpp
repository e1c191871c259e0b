#include "kernels/params/block_quant.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, BlockQuantParams* out) {
  AttrReader r(op);
  const std::string_view name = r.text("format", "");
  const std::optional<BlockFormat> format = parse_block_format(name);
  if (!format) r.invalid("format", "is '" + std::string(name) + "', not q8_0, q4_0, q4_1, q4_k or q6_k");
  out->format = format.value_or(BlockFormat::kQ8_0);
  out->in_features = r.integer("in_features", 0);
  out->row_bytes = block_row_bytes(out->format, out->in_features);
  if (format && out->row_bytes < 0) r.invalid("in_features", "is not a positive multiple of the format's block size");
  out->row_blocks = out->row_bytes > 0 ? out->in_features / block_layout(out->format).values : 0;
  return r.status();
}

}  // namespace pock::params
