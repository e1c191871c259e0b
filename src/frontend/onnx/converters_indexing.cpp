// ONNX TopK (k an input from opset 10; opset_adapters.cpp moves opset 1's attribute there), OneHot
// and ReverseSequence: one pock op each. TopK's k and OneHot's depth fix output shapes, so they
// must be known at compile time; OneHot's values and ReverseSequence's lengths may be run-time
// tensors.
#include <cmath>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

Status convert_top_k(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::vector<int64_t> k, node.const_ints(1, "K"));
  if (k.size() != 1) return node.input_error(1, "(K) must hold one value, got " + std::to_string(k.size()));
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", -1));
  POCK_ASSIGN_OR_RETURN(int64_t largest, node.attrs().get_int("largest", 1));
  POCK_ASSIGN_OR_RETURN(int64_t sorted, node.attrs().get_int("sorted", 1));
  (void)sorted;  // ONNX leaves the order of an unsorted result open: pock's sorted order is one
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("TopK", {x}, Attrs{{"k", k[0]}, {"axis", axis}, {"largest", largest}});
}

Status convert_one_hot(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(const HostTensor* depth, node.const_input(1, "depth"));
  if (depth->size() != 1) return node.input_error(1, "(depth) must hold one value");
  const double d = depth->as_double(0);
  if (!(d >= 1) || d != std::floor(d) || d > 1e12) {
    return node.input_error(1, "(depth) must be a positive whole number, got " + std::to_string(d));
  }
  POCK_ASSIGN_OR_RETURN(int64_t axis, node.attrs().get_int("axis", -1));
  POCK_ASSIGN_OR_RETURN(TensorId indices, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId values, node.input(2));
  return node.emit_final("OneHot", {indices, values}, Attrs{{"depth", static_cast<int64_t>(d)}, {"axis", axis}});
}

Status convert_reverse_sequence(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t batch_axis, node.attrs().get_int("batch_axis", 1));
  POCK_ASSIGN_OR_RETURN(int64_t time_axis, node.attrs().get_int("time_axis", 0));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId lens, node.input(1));
  return node.emit_final("ReverseSequence", {x, lens}, Attrs{{"batch_axis", batch_axis}, {"time_axis", time_axis}});
}

}  // namespace

void register_indexing_converters(std::unordered_map<std::string, Converter>& t) {
  t["TopK"] = convert_top_k;
  t["OneHot"] = convert_one_hot;
  t["ReverseSequence"] = convert_reverse_sequence;
}

}  // namespace pock::onnx_import
