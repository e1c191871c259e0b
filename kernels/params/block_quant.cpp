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
  const std::string_view compute = r.text("compute", "f32");
  out->int8 = compute == "int8";
  if (!out->int8 && compute != "f32") r.invalid("compute", "is '" + std::string(compute) + "', not f32 or int8");
  out->ignore_index = r.integer("ignore_index", -100);
  out->label_smoothing = r.real("label_smoothing", 0.0);
  if (out->int8 && format && !has_int8_view(*format)) r.invalid("compute", "int8 needs q8_0, q4_0 or q4_1 blocks");
  return r.status();
}

}  // namespace pock::params
