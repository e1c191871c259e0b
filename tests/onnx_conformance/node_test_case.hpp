// One ONNX backend node test case on disk (the layout of onnx's `cmd_tools generate-data`):
// CASE/model.onnx and CASE/test_data_set_N/{input,output}_K.pb, one TensorProto per file, K in
// the order of the graph's inputs (those without an initializer) and outputs.
#pragma once
#include <string>
#include <vector>

#include "frontend/onnx/proto_reading.hpp"

namespace pock::conformance {

struct NamedTensor {
  std::string name;  // the graph input's or output's name
  onnx_import::DecodedTensor value;
};

struct DataSet {
  std::string dir;
  std::vector<NamedTensor> inputs, outputs;
};

struct NodeTestCase {
  std::vector<DataSet> data_sets;
};

// Reads every data set of the case in `case_dir` (the model itself is imported by path).
Result<NodeTestCase> read_node_test_case(const std::string& case_dir);

}  // namespace pock::conformance
