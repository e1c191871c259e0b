// Reading ONNX protobuf messages into plain values: tensors, dtypes, attributes. Everything from
// the file is checked (dims, sizes, element types) so that a malformed file is an error here.
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/onnx/host_tensor.hpp"
#include "pock/compiler/ir.hpp"

namespace pock::onnx_import {

// ONNX TensorProto element type -> pock dtype. DOUBLE is refused: pock has no f64, and narrowing
// it silently would change the model's numbers. Callers add the tensor or node to the message.
Result<DType> dtype_from_onnx(int32_t elem_type);
const char* onnx_type_name(int32_t elem_type);

// Checks that every dim is non-negative and the element count stays far from overflow.
Status check_dims(const Shape& shape, const std::string& what);

struct DecodedTensor {
  DType dtype = DType::kF32;
  Shape shape;
  std::vector<uint8_t> bytes;  // numel(shape) values of dtype, little-endian
};

// Decodes raw_data, the typed repeated fields, or external data (relative to base_dir).
Result<DecodedTensor> decode_tensor(const onnx::TensorProto& t, const std::string& base_dir);
Result<HostTensor> decode_host_tensor(const onnx::TensorProto& t, const std::string& base_dir);

// Attribute access with the node named in errors.
class NodeAttrs {
 public:
  NodeAttrs(const onnx::NodeProto& node, std::string where) : node_(node), where_(std::move(where)) {}
  const onnx::AttributeProto* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  Result<int64_t> get_int(const std::string& name, int64_t fallback) const;
  Result<double> get_float(const std::string& name, double fallback) const;
  Result<std::string> get_string(const std::string& name, const std::string& fallback) const;
  Result<std::vector<int64_t>> get_ints(const std::string& name, const std::vector<int64_t>& fallback) const;
  Result<std::vector<double>> get_floats(const std::string& name, const std::vector<double>& fallback) const;
  const std::string& where() const { return where_; }

 private:
  Status wrong_type(const std::string& name, const char* expected) const;
  const onnx::NodeProto& node_;
  std::string where_;
};

}  // namespace pock::onnx_import
