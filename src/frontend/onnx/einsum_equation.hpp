// An ONNX Einsum equation, parsed against its operands' ranks: one label per axis of each operand
// and of the result, with "..." expanded into labels of its own and the implicit form ("ij,jk")
// given its result (the ellipsis axes, then the labels used once, in alphabetical order).
#pragma once
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace pock::onnx_import {

struct EinsumEquation {
  std::vector<std::string> operands;  // labels of each operand, one per axis
  std::string result;                 // labels of the result, one per axis
};

// Ellipsis axes are labelled '0', '1', ... (right-aligned across operands, as numpy broadcasts
// them); letters are the equation's own labels.
Result<EinsumEquation> parse_einsum(const std::string& equation, const std::vector<size_t>& ranks);

}  // namespace pock::onnx_import
