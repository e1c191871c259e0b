// ONNX ops whose output size depends on the input's values: NonZero, Unique, NonMaxSuppression.
// pock's shapes are fixed at compile time, so these are refused at run time with that reason
// (NonZero of a value known at compile time is folded instead: folding_data_dependent.cpp; for
// Compress see converters_compress.cpp).
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status refuse_data_dependent(NodeView& node) {
  return node.unsupported("its output size depends on the values of its input, which are known only at run time; "
                          "pock's shapes are fixed at compile time (an input known at compile time is folded where "
                          "docs/onnx.md says so)");
}

}  // namespace

void register_data_dependent_converters(std::unordered_map<std::string, Converter>& t) {
  t["NonZero"] = refuse_data_dependent;
  t["Unique"] = refuse_data_dependent;
  t["NonMaxSuppression"] = refuse_data_dependent;
}

}  // namespace pock::onnx_import
