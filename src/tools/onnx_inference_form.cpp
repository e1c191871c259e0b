#include "tools/onnx_inference_form.hpp"

#ifdef POCK_HAVE_ONNX
#include <set>
#include <string>

namespace pock::tools {
namespace {

std::set<std::string> read_values(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const onnx::NodeProto& n : g.node()) out.insert(n.input().begin(), n.input().end());
  for (const onnx::ValueInfoProto& v : g.output()) out.insert(v.name());
  return out;
}

bool is_graph_input(const onnx::GraphProto& g, const std::string& name) {
  for (const onnx::ValueInfoProto& v : g.input()) {
    if (v.name() == name) return true;
  }
  return false;
}

}  // namespace

Result<InferenceFormReport> set_inference_form(onnx::GraphProto* graph) {
  const std::set<std::string> read = read_values(*graph);
  InferenceFormReport report;
  for (onnx::NodeProto& n : *graph->mutable_node()) {
    if (n.op_type() == "BatchNormalization") {
      for (onnx::AttributeProto& a : *n.mutable_attribute()) {
        if (a.name() != "training_mode" || a.i() == 0) continue;
        for (int i = 1; i < n.output_size(); ++i) {
          if (!n.output(i).empty() && read.count(n.output(i))) {
            return Status(Code::kUnsupportedOp, "BatchNormalization '" + n.name() + "': its running statistic output '" +
                                                    n.output(i) + "' is read, so it cannot be written in inference form "
                                                    "(--keep-training-form keeps it as it is)");
          }
        }
        a.set_i(0);
        while (n.output_size() > 1) n.mutable_output()->RemoveLast();
        ++report.batchnorms;
      }
    } else if (n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty() && !is_graph_input(*graph, n.input(2))) {
      n.mutable_input()->RemoveLast();  // training_mode is optional and defaults to false
      ++report.dropouts;
    }
  }
  return report;
}

}  // namespace pock::tools
#endif  // POCK_HAVE_ONNX
