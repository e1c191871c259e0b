#include "frontend/onnx/node_schemas.hpp"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace pock::onnx_import {
namespace {

// The signature of one operator version that libonnx 1.12 does not know.
struct NewerSchema {
  const char* op;
  int since;
  int min_inputs, max_inputs;  // max -1: any number
  int min_outputs, max_outputs;
  std::vector<std::string> attributes;
  std::vector<std::string> required;
};

const std::vector<NewerSchema>& newer_schemas() {
  static const std::vector<NewerSchema> table = {
#include "frontend/onnx/newer_schemas.inc"
  };
  return table;
}

// The newest opset libonnx has schemas for.
int library_max_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 0 : it->second.second;
}

// The newest version of `op` at `opset` from the table, when it is newer than libonnx's opsets.
const NewerSchema* newer_schema(const std::string& op, int64_t opset, int library_max) {
  const NewerSchema* best = nullptr;
  for (const NewerSchema& s : newer_schemas()) {
    if (op == s.op && s.since > library_max && s.since <= opset && (!best || s.since > best->since)) best = &s;
  }
  return best;
}

// The first opset at which the table defines `op`, or 0.
int first_table_version(const std::string& op) {
  int first = 0;
  for (const NewerSchema& s : newer_schemas()) {
    if (op == s.op && (first == 0 || s.since < first)) first = s.since;
  }
  return first;
}

std::string count_text(int lo, int hi) {
  if (hi < 0) return "at least " + std::to_string(lo);
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
}

// What Verify checks, for a table schema: counts, known and required attribute names.
std::string verify_newer(const NewerSchema& s, const onnx::NodeProto& node) {
  if (node.input_size() < s.min_inputs || (s.max_inputs >= 0 && node.input_size() > s.max_inputs)) {
    return "it takes " + count_text(s.min_inputs, s.max_inputs) + " inputs, the node has " + std::to_string(node.input_size());
  }
  if (node.output_size() < s.min_outputs || (s.max_outputs >= 0 && node.output_size() > s.max_outputs)) {
    return "it has " + count_text(s.min_outputs, s.max_outputs) + " outputs, the node has " +
           std::to_string(node.output_size());
  }
  for (const auto& a : node.attribute()) {
    if (std::find(s.attributes.begin(), s.attributes.end(), a.name()) == s.attributes.end()) {
      return "unrecognized attribute '" + a.name() + "'";
    }
  }
  for (const std::string& r : s.required) {
    bool found = false;
    for (const auto& a : node.attribute()) found = found || a.name() == r;
    if (!found) return "required attribute '" + r + "' is missing";
  }
  return {};
}

std::string node_text(int i, const onnx::NodeProto& node) {
  return "node " + std::to_string(i) + " '" + node.name() + "' (" + node.op_type() + ")";
}

}  // namespace

Status check_node_schemas(const onnx::GraphProto& graph, int64_t opset) {
  const int library_max = library_max_opset();
  const int library_opset = static_cast<int>(std::min<int64_t>(opset, library_max));
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    if (opset > library_max) {
      if (const NewerSchema* s = newer_schema(node.op_type(), opset, library_max)) {
        const std::string why = verify_newer(*s, node);
        if (!why.empty()) {
          return Status(Code::kInvalidArgument, node_text(i, node) + " does not match ONNX's " + node.op_type() + "-" +
                                                    std::to_string(s->since) + " schema: " + why);
        }
        continue;
      }
    }
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), library_opset, "");
    if (!schema) {
      int first = first_table_version(node.op_type());
      for (int v = library_opset + 1; v <= library_max; ++v) {
        if (const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(node.op_type(), v, "")) {
          first = later->since_version();
          break;
        }
      }
      if (first > opset) {
        return Status(Code::kUnsupportedOp, node_text(i, node) + ": ONNX defines " + node.op_type() + " from opset " +
                                                std::to_string(first) + ", but the model declares opset " +
                                                std::to_string(opset));
      }
      continue;  // an op ONNX does not define: the importer names it
    }
    try {
      schema->Verify(node);
    } catch (const std::exception& e) {
      return Status(Code::kInvalidArgument, node_text(i, node) + " does not match ONNX's schema at opset " +
                                                std::to_string(opset) + ": " + e.what());
    }
  }
  return Status::ok();
}

Status check_unchanged_until(const onnx::GraphProto& graph, int64_t opset, int64_t first) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    const onnx::OpSchema* then = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
    const onnx::OpSchema* now = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(first), "");
    if (then && now && then->since_version() == now->since_version()) continue;
    const std::string version = then ? node.op_type() + "-" + std::to_string(then->since_version()) : "not defined";
    return Status(Code::kUnsupportedOp, "the model uses ONNX opset " + std::to_string(opset) +
                                            "; pock reads a model below opset " + std::to_string(first) +
                                            " only when its ops are unchanged at " + std::to_string(first) + ", but " +
                                            node_text(i, node) + " is " + version +
                                            " there (re-export at a newer opset, or convert with onnx.version_converter)");
  }
  return Status::ok();
}

}  // namespace pock::onnx_import
