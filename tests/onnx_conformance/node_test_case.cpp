#include "node_test_case.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace pock::conformance {
namespace fs = std::filesystem;
namespace {

Result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

template <typename Message>
Result<Message> parse_file(const fs::path& path) {
  POCK_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  Message m;
  if (!m.ParseFromString(bytes)) return Status(Code::kInvalidArgument, path.filename().string() + " does not parse");
  return m;
}

// onnx 1.12 writes bfloat16 data as numpy uint16 (numpy has no bfloat16): read those bits as the
// bfloat16 the graph declares.
void retag_bfloat16(onnx::TensorProto* t, const onnx::ValueInfoProto& declared) {
  if (t->data_type() == onnx::TensorProto::UINT16 && declared.type().has_tensor_type() &&
      declared.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16) {
    t->set_data_type(onnx::TensorProto::BFLOAT16);
  }
}

// `role` is "input" or "output": files ROLE_K.pb, K in the order of the graph's list.
Result<std::vector<NamedTensor>> read_tensors(const fs::path& dir, const std::string& role,
                                              const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& declared) {
  std::vector<NamedTensor> out;
  for (int k = 0;; ++k) {
    const fs::path path = dir / (role + "_" + std::to_string(k) + ".pb");
    if (!fs::exists(path)) break;
    if (k >= declared.size()) {
      return Status(Code::kInvalidArgument, path.filename().string() + ": the graph has only " + std::to_string(declared.size()) + " " + role + "(s)");
    }
    if (!declared[k].type().has_tensor_type()) {
      return Status(Code::kUnsupportedOp, role + " " + std::to_string(k) + " '" + declared[k].name() +
                                              "' is not a tensor (sequence, map or optional)");
    }
    POCK_ASSIGN_OR_RETURN(onnx::TensorProto t, parse_file<onnx::TensorProto>(path));
    retag_bfloat16(&t, declared[k]);
    auto value = onnx_import::decode_tensor(t, dir.string());
    if (!value.is_ok()) {
      return Status(value.status().code(), path.filename().string() + ": " + value.status().message());
    }
    out.push_back({declared[k].name(), std::move(value).value()});
  }
  return out;
}

// The inputs a caller feeds: old exporters (IR version < 4) also list each initializer as a graph
// input, which the data sets skip, as onnx's backend runner does.
google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> fed_inputs(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> initialized;
  for (const auto& t : graph.initializer()) initialized.insert(t.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> fed;
  for (const auto& v : graph.input()) {
    if (!initialized.count(v.name())) *fed.Add() = v;
  }
  return fed;
}

}  // namespace

Result<NodeTestCase> read_node_test_case(const std::string& case_dir) {
  POCK_ASSIGN_OR_RETURN(onnx::ModelProto model, parse_file<onnx::ModelProto>(fs::path(case_dir) / "model.onnx"));
  const auto inputs = fed_inputs(model.graph());
  NodeTestCase c;
  for (int n = 0;; ++n) {
    const fs::path dir = fs::path(case_dir) / ("test_data_set_" + std::to_string(n));
    if (!fs::is_directory(dir)) break;
    DataSet d;
    d.dir = dir.string();
    POCK_ASSIGN_OR_RETURN(d.inputs, read_tensors(dir, "input", inputs));
    POCK_ASSIGN_OR_RETURN(d.outputs, read_tensors(dir, "output", model.graph().output()));
    c.data_sets.push_back(std::move(d));
  }
  if (c.data_sets.empty()) return Status(Code::kNotFound, case_dir + " has no test_data_set_0");
  return c;
}

}  // namespace pock::conformance
