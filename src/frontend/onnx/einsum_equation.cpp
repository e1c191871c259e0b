#include "frontend/onnx/einsum_equation.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace pock::onnx_import {
namespace {

Status bad(const std::string& equation, const std::string& why) {
  return Status(Code::kInvalidArgument, "Einsum equation '" + equation + "': " + why);
}

std::vector<std::string> split_terms(const std::string& lhs) {
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

// The labels of the last `count` of `total` ellipsis axes.
std::string ellipsis_labels(size_t total, size_t count) {
  std::string labels;
  for (size_t k = total - count; k < total; ++k) labels += static_cast<char>('0' + k);
  return labels;
}

// Replaces "..." in `term` by `labels`; letters only otherwise.
Result<std::string> expand(const std::string& equation, const std::string& term, const std::string& labels) {
  std::string out;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      out += labels;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      out += term[i];
    } else {
      return bad(equation, std::string("'") + term[i] + "' is not a label (labels are letters)");
    }
  }
  return out;
}

size_t letters(const std::string& term) {
  return static_cast<size_t>(std::count_if(term.begin(), term.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }));
}

}  // namespace

Result<EinsumEquation> parse_einsum(const std::string& equation, const std::vector<size_t>& ranks) {
  std::string text;
  for (char c : equation) {
    if (c != ' ') text += c;
  }
  const size_t arrow = text.find("->");
  const std::vector<std::string> terms = split_terms(text.substr(0, arrow));
  if (terms.size() != ranks.size()) {
    return bad(equation, "names " + std::to_string(terms.size()) + " operands, the node has " + std::to_string(ranks.size()));
  }
  // How many axes each operand's ellipsis stands for, and the most of them (the result's).
  std::vector<size_t> ellipsis(terms.size(), 0);
  size_t widest = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const bool has = terms[t].find("...") != std::string::npos;
    const size_t named = letters(terms[t]);
    if (has ? named > ranks[t] : named != ranks[t]) {
      return bad(equation, "operand " + std::to_string(t) + " has rank " + std::to_string(ranks[t]) + " but term '" +
                               terms[t] + "' names " + std::to_string(named) + " axes");
    }
    ellipsis[t] = has ? ranks[t] - named : 0;
    widest = std::max(widest, ellipsis[t]);
  }
  if (widest > 10) return bad(equation, "'...' stands for more than 10 axes");
  EinsumEquation eq;
  std::map<char, int> uses;
  for (size_t t = 0; t < terms.size(); ++t) {
    POCK_ASSIGN_OR_RETURN(std::string labels, expand(equation, terms[t], ellipsis_labels(widest, ellipsis[t])));
    for (char c : labels) ++uses[c];
    eq.operands.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    POCK_ASSIGN_OR_RETURN(eq.result, expand(equation, text.substr(arrow + 2), ellipsis_labels(widest, widest)));
    for (char c : eq.result) {
      if (!uses.count(c)) return bad(equation, std::string("result label '") + c + "' names no operand axis");
      if (std::count(eq.result.begin(), eq.result.end(), c) > 1) return bad(equation, std::string("result label '") + c + "' repeats");
    }
  } else {
    eq.result = ellipsis_labels(widest, widest);
    for (const auto& [c, n] : uses) {
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) eq.result += c;
    }
  }
  return eq;
}

}  // namespace pock::onnx_import
