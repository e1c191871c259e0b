#include "compiler/lowering/bf16_compute.hpp"

#include <string_view>

namespace pock {

int mark_bf16_gemms(std::vector<Node>& nodes) {
  int marked = 0;
  for (Node& node : nodes) {
    const std::string_view op = node.op;
    if (op == "Linear" || op == "MatMul" || op == "LinearInputGrad" || op == "LinearWeightGrad") {
      node.attrs.set("compute", std::string("bf16"));
      ++marked;
    }
  }
  return marked;
}

}  // namespace pock
