// ONNX Compress with a condition known at compile time: the selected positions are then fixed, so
// Compress is a Gather of those positions (along axis, or of the flattened input without one),
// which pock runs and differentiates. A condition computed at run time would make the output's
// size depend on the data, which pock's static shapes cannot express: it is refused, saying so.
#include <cstring>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_compress(NodeView& node) {
  if (!node.input_is_constant(1)) {
    return node.unsupported("Compress with a condition computed at run time: its output size depends on the data, and "
                            "pock's shapes are fixed at compile time");
  }
  POCK_ASSIGN_OR_RETURN(std::vector<int64_t> condition, node.const_ints(1, "condition"));
  const Shape& x = node.value(0).shape;
  const bool flatten = !node.attrs().has("axis");
  int64_t axis = 0, extent = numel(x);
  if (!flatten) {
    POCK_ASSIGN_OR_RETURN(int64_t attr, node.attrs().get_int("axis", 0));
    auto a = normalize_axis(attr, static_cast<int>(x.size()));
    if (!a.is_ok()) return node.error("axis " + std::to_string(attr) + " is out of range for " + shape_str(x));
    axis = a.value();
    extent = x[static_cast<size_t>(axis)];
  }
  std::vector<int64_t> positions;
  for (size_t i = 0; i < condition.size(); ++i) {
    if (condition[i] == 0) continue;
    if (static_cast<int64_t>(i) >= extent) {
      return node.input_error(1, "(condition) selects position " + std::to_string(i) + ", past the " +
                                     std::to_string(extent) + " entries it chooses from");
    }
    positions.push_back(static_cast<int64_t>(i));
  }
  if (positions.empty()) return node.unsupported("a Compress that selects nothing (pock has no zero-size tensors)");
  POCK_ASSIGN_OR_RETURN(TensorId data, node.input(0));
  if (flatten) {
    POCK_ASSIGN_OR_RETURN(auto flat, node.emit("Reshape", {data}, Attrs{{"shape", Shape{extent}}}, "flat"));
    data = flat[0];
  }
  std::vector<uint8_t> bytes(positions.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), positions.data(), bytes.size());
  const TensorId indices = node.ctx().graph.add_constant(node.proto().output(0) + "/positions", DType::kI64,
                                                         Shape{static_cast<int64_t>(positions.size())}, std::move(bytes));
  return node.emit_final("Gather", {data, indices}, Attrs{{"axis", axis}});
}

}  // namespace

void register_compress_converters(std::unordered_map<std::string, Converter>& t) { t["Compress"] = convert_compress; }

}  // namespace pock::onnx_import
