#include "frontend/onnx/proto_reading.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace pock::onnx_import {
namespace {

using TP = onnx::TensorProto;

// Far beyond any model that fits a device, far below int64 overflow in byte counts.
constexpr int64_t kMaxElements = int64_t{1} << 40;

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

Result<std::vector<uint8_t>> read_external(const TP& t, const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      int64_t v = 0;
      const std::string& s = kv.value();
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size()) {
        return Status(Code::kInvalidArgument, "initializer '" + t.name() + "': external data " + kv.key() + " '" + s +
                                                  "' is not a number");
      }
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty()) return Status(Code::kInvalidArgument, "initializer '" + t.name() + "': external data without a location");
  const std::filesystem::path rel(location);
  if (rel.is_absolute() || location.find("..") != std::string::npos) {
    return Status(Code::kInvalidArgument, "initializer '" + t.name() + "': external data location '" + location +
                                              "' must be a plain path beside the model");
  }
  const std::filesystem::path path = std::filesystem::path(base_dir) / rel;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "initializer '" + t.name() + "': cannot open external data file '" + path.string() + "'");
  in.seekg(0, std::ios::end);
  const int64_t file_size = in.tellg();
  if (length < 0) length = file_size - offset;
  if (offset < 0 || length < 0 || offset > file_size || length > file_size - offset) {
    return Status(Code::kInvalidArgument, "initializer '" + t.name() + "': external data range [" + std::to_string(offset) +
                                              ", +" + std::to_string(length) + ") is outside '" + path.string() + "'");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(bytes.data()), length);
  if (!in) return Status(Code::kIo, "initializer '" + t.name() + "': short read from '" + path.string() + "'");
  return bytes;
}

// Typed repeated fields -> little-endian bytes of the pock dtype.
Result<std::vector<uint8_t>> typed_fields(const TP& t, int64_t n) {
  std::vector<uint8_t> out;
  auto count_error = [&](int64_t have) {
    return Status(Code::kInvalidArgument, "initializer '" + t.name() + "' holds " + std::to_string(have) +
                                              " values but its dims need " + std::to_string(n));
  };
  switch (t.data_type()) {
    case TP::FLOAT:
      if (t.float_data_size() != n) return count_error(t.float_data_size());
      for (float v : t.float_data()) append(out, v);
      break;
    case TP::INT64:
      if (t.int64_data_size() != n) return count_error(t.int64_data_size());
      for (int64_t v : t.int64_data()) append(out, v);
      break;
    case TP::INT32:
      if (t.int32_data_size() != n) return count_error(t.int32_data_size());
      for (int32_t v : t.int32_data()) append(out, v);
      break;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
      if (t.int32_data_size() != n) return count_error(t.int32_data_size());
      for (int32_t v : t.int32_data()) append(out, static_cast<uint8_t>(v));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16:
    case TP::INT16:
    case TP::UINT16:
      if (t.int32_data_size() != n) return count_error(t.int32_data_size());
      for (int32_t v : t.int32_data()) append(out, static_cast<uint16_t>(v));
      break;
    case TP::DOUBLE:
      if (t.double_data_size() != n) return count_error(t.double_data_size());
      for (double v : t.double_data()) append(out, v);
      break;
    // ONNX keeps uint32 and uint64 values in uint64_data.
    case TP::UINT32:
      if (t.uint64_data_size() != n) return count_error(t.uint64_data_size());
      for (uint64_t v : t.uint64_data()) append(out, static_cast<uint32_t>(v));
      break;
    case TP::UINT64:
      if (t.uint64_data_size() != n) return count_error(t.uint64_data_size());
      for (uint64_t v : t.uint64_data()) append(out, v);
      break;
    default:
      return Status(Code::kUnsupportedOp, "initializer '" + t.name() + "' has element type " + onnx_type_name(t.data_type()));
  }
  return out;
}

}  // namespace

Result<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case TP::FLOAT: return DType::kF32;
    case TP::DOUBLE: return DType::kF64;
    case TP::FLOAT16: return DType::kF16;
    case TP::BFLOAT16: return DType::kBF16;
    case TP::INT64: return DType::kI64;
    case TP::INT32: return DType::kI32;
    case TP::INT8: return DType::kI8;
    case TP::UINT8: return DType::kU8;
    case TP::BOOL: return DType::kBool;
    case TP::INT16: return DType::kI16;
    case TP::UINT16: return DType::kU16;
    case TP::UINT32: return DType::kU32;
    case TP::UINT64: return DType::kU64;
    default:
      return Status(Code::kUnsupportedOp, std::string("element type ") + onnx_type_name(elem_type) + " is not supported");
  }
}

const char* onnx_type_name(int32_t elem_type) {
  // Types added after the libonnx this links (1.12 stops at BFLOAT16 = 16), in ONNX's numbering.
  static const char* const kNewer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                       "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0"};
  if (!TP::DataType_IsValid(elem_type)) {
    const int32_t k = elem_type - 17;
    return k >= 0 && k < static_cast<int32_t>(std::size(kNewer)) ? kNewer[k] : "(invalid)";
  }
  static thread_local std::string name;
  name = TP::DataType_Name(static_cast<TP::DataType>(elem_type));
  return name.c_str();
}

Status check_dims(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status(Code::kInvalidArgument, what + " has a negative dimension in " + shape_str(shape));
    if (d > 0 && n > kMaxElements / d) return Status(Code::kInvalidArgument, what + " is too large: " + shape_str(shape));
    n *= d;
  }
  return Status::ok();
}

Result<DecodedTensor> decode_tensor(const TP& t, const std::string& base_dir) {
  DecodedTensor out;
  auto dt = dtype_from_onnx(t.data_type());
  if (!dt.is_ok()) return Status(dt.status().code(), "initializer '" + t.name() + "': " + dt.status().message());
  out.dtype = dt.value();
  out.shape.assign(t.dims().begin(), t.dims().end());
  POCK_RETURN_IF_ERROR(check_dims(out.shape, "initializer '" + t.name() + "'"));
  if (t.has_segment()) return Status(Code::kUnsupportedOp, "initializer '" + t.name() + "' is segmented");
  const int64_t n = numel(out.shape);
  const size_t stored_size = dtype_size(out.dtype);
  std::vector<uint8_t> raw;
  bool have_raw = false;
  if (t.data_location() == TP::EXTERNAL) {
    POCK_ASSIGN_OR_RETURN(raw, read_external(t, base_dir));
    have_raw = true;
  } else if (t.has_raw_data()) {
    raw.assign(t.raw_data().begin(), t.raw_data().end());
    have_raw = true;
  }
  if (have_raw) {
    if (raw.size() != static_cast<size_t>(n) * stored_size) {
      return Status(Code::kInvalidArgument, "initializer '" + t.name() + "' holds " + std::to_string(raw.size()) +
                                                " bytes but " + shape_str(out.shape) + " of " +
                                                onnx_type_name(t.data_type()) + " needs " +
                                                std::to_string(n * static_cast<int64_t>(stored_size)));
    }
    out.bytes = std::move(raw);
    return out;
  }
  POCK_ASSIGN_OR_RETURN(out.bytes, typed_fields(t, n));
  return out;
}

Result<HostTensor> decode_host_tensor(const TP& t, const std::string& base_dir) {
  POCK_ASSIGN_OR_RETURN(DecodedTensor d, decode_tensor(t, base_dir));
  return host_tensor_from_bytes(d.dtype, std::move(d.shape), d.bytes);
}

// --- attributes ------------------------------------------------------------------------------

const onnx::AttributeProto* NodeAttrs::find(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

Status NodeAttrs::wrong_type(const std::string& name, const char* expected) const {
  return Status(Code::kInvalidArgument, where_ + ": attribute '" + name + "' must be " + expected);
}

Result<int64_t> NodeAttrs::get_int(const std::string& name, int64_t fallback) const {
  const auto* a = find(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) return wrong_type(name, "an int");
  return a->i();
}

// ONNX float attributes are float32, written from a decimal by the exporter (eps = 1e-5 arrives
// as 9.99999974738e-06). The shortest decimal that rounds to the same float32 is that decimal.
double shortest_decimal(float f) {
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(f));
    const double d = std::strtod(buf, nullptr);
    if (static_cast<float>(d) == f) return d;
  }
  return static_cast<double>(f);
}

Result<double> NodeAttrs::get_float(const std::string& name, double fallback) const {
  const auto* a = find(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) return wrong_type(name, "a float");
  return shortest_decimal(a->f());
}

Result<std::string> NodeAttrs::get_string(const std::string& name, const std::string& fallback) const {
  const auto* a = find(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) return wrong_type(name, "a string");
  return a->s();
}

Result<std::vector<int64_t>> NodeAttrs::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  const auto* a = find(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS) return wrong_type(name, "a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Result<std::vector<double>> NodeAttrs::get_floats(const std::string& name, const std::vector<double>& fallback) const {
  const auto* a = find(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOATS) return wrong_type(name, "a list of floats");
  std::vector<double> out;
  for (float f : a->floats()) out.push_back(shortest_decimal(f));
  return out;
}

}  // namespace pock::onnx_import
