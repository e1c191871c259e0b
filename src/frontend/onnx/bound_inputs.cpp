#include "frontend/onnx/bound_inputs.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "frontend/onnx/proto_reading.hpp"

namespace pock::onnx_import {
namespace {

Status bind_error(const std::string& name, const std::string& what) {
  return Status(Code::kInvalidArgument, "--bind " + name + ": " + what);
}

// One text value in `dtype`: integers must fit it exactly, floats are rounded to it as any
// float literal is.
Status parse_literal(const std::string& name, const std::string& text, DType dtype, HostTensor* t) {
  const std::string bad = "'" + text + "' is not a " + std::string(dtype_name(dtype)) + " value";
  if (is_float(dtype)) {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) return bind_error(name, bad);
    t->f.push_back(round_to(dtype, v));
    return Status::ok();
  }
  int64_t v = 0;
  auto [next, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || next != text.data() + text.size()) return bind_error(name, bad);
  if (wrap_to(dtype, v) != v) return bind_error(name, "'" + text + "' is out of range for " + dtype_name(dtype));
  t->i.push_back(v);
  return Status::ok();
}

// The text form takes the declared dtype and a 1-D shape, or rank 0 for a scalar input.
Result<HostTensor> from_literal(const std::string& name, const OnnxBoundValue& bound, const onnx::TypeProto_Tensor& type,
                                DType declared) {
  HostTensor t;
  t.dtype = type.elem_type() != 0 ? declared : DType::kI64;
  const int rank = type.has_shape() ? type.shape().dim_size() : 1;
  if (rank > 1) {
    return bind_error(name, "the input has rank " + std::to_string(rank) + "; give a value of that rank as a .npy "
                            "file (--bind " + name + "=@values.npy)");
  }
  for (const std::string& text : *bound.literal) POCK_RETURN_IF_ERROR(parse_literal(name, text, t.dtype, &t));
  const int64_t n = static_cast<int64_t>(bound.literal->size());
  if (rank == 0 && n != 1) {
    return bind_error(name, "the input is a scalar, but " + std::to_string(n) + " values are given");
  }
  t.shape = rank == 0 ? Shape{} : Shape{n};
  return t;
}

// Every dimension the file fixes must match; symbolic ones take the bound value's size.
Status check_declared_shape(const std::string& name, const Shape& shape, const onnx::TypeProto_Tensor& type) {
  if (!type.has_shape()) return Status::ok();
  const auto& declared = type.shape();
  bool agrees = declared.dim_size() == static_cast<int>(shape.size());
  for (int d = 0; agrees && d < declared.dim_size(); ++d) {
    agrees = !declared.dim(d).has_dim_value() || declared.dim(d).dim_value() == shape[d];
  }
  if (agrees) return Status::ok();
  std::string want = "[";
  for (int d = 0; d < declared.dim_size(); ++d) {
    const auto& dim = declared.dim(d);
    want += (d ? ", " : "") + (dim.has_dim_value() ? std::to_string(dim.dim_value())
                                                    : dim.has_dim_param() ? dim.dim_param() : std::string("?"));
  }
  return bind_error(name, "the value has shape " + shape_str(shape) + ", but the model declares the input " + want + "]");
}

}  // namespace

Result<HostTensor> bound_input_value(const onnx::ValueInfoProto& in, const OnnxBoundValue& bound,
                                     const OnnxImportOptions& options) {
  const std::string& name = in.name();
  if (options.input_shapes.count(name)) {
    return bind_error(name, "the input also has an --input-shape; the bound value fixes its shape");
  }
  if (!in.type().has_tensor_type()) return bind_error(name, "the input is not a tensor");
  const auto& type = in.type().tensor_type();
  DType declared = DType::kI64;
  if (type.elem_type() != 0) {
    auto dt = dtype_from_onnx(type.elem_type());
    if (!dt.is_ok()) return bind_error(name, dt.status().message());
    declared = dt.value();
  }
  HostTensor value;
  if (bound.literal) {
    POCK_ASSIGN_OR_RETURN(value, from_literal(name, bound, type, declared));
  } else {
    if (type.elem_type() != 0 && bound.dtype != declared) {
      return bind_error(name, std::string("the value is ") + dtype_name(bound.dtype) + ", but the model declares the "
                              "input " + dtype_name(declared));
    }
    POCK_RETURN_IF_ERROR(check_dims(bound.shape, "--bind " + name));
    auto decoded = host_tensor_from_bytes(bound.dtype, bound.shape, bound.bytes);
    if (!decoded.is_ok()) return bind_error(name, decoded.status().message());
    value = std::move(decoded).value();
  }
  POCK_RETURN_IF_ERROR(check_declared_shape(name, value.shape, type));
  return value;
}

Status declare_bound_input(ImportContext& ctx, const onnx::ValueInfoProto& in, const OnnxBoundValue& bound) {
  POCK_ASSIGN_OR_RETURN(HostTensor value, bound_input_value(in, bound, ctx.options));
  Value& v = ctx.define(in.name());
  v.dtype = value.dtype;
  v.shape = value.shape;
  v.constant = std::move(value);
  return Status::ok();
}

Status check_bound_names(const ImportContext& ctx) {
  auto is_input = [&](const std::string& name) {
    for (const auto& in : ctx.proto.input()) {
      if (in.name() == name) return true;
    }
    return false;
  };
  auto is_initializer = [&](const std::string& name) {
    for (const auto& t : ctx.proto.initializer()) {
      if (t.name() == name) return true;
    }
    return false;
  };
  for (const auto& [name, value] : ctx.options.bound_inputs) {
    if (is_initializer(name)) {
      return Status(Code::kInvalidArgument, "--bind names '" + name + "', which is an initializer of the model, not a "
                                            "graph input: its value is already known");
    }
    if (!is_input(name)) return Status(Code::kNotFound, "--bind names '" + name + "', which is not an input of the model");
  }
  return Status::ok();
}

}  // namespace pock::onnx_import
