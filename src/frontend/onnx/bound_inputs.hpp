// Graph inputs bound to values at compile time (OnnxImportOptions::bound_inputs, pockc's --bind):
// each becomes a constant, checked against the type the file declares for the input.
#pragma once
#include <onnx/onnx_pb.h>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {

// The value `bound` gives the graph input `in`, checked against the input's declared dtype and
// shape; the error names the input.
Result<HostTensor> bound_input_value(const onnx::ValueInfoProto& in, const OnnxBoundValue& bound,
                                     const OnnxImportOptions& options);

// Defines `in` as the constant `bound` holds, after checking its dtype and shape against the
// input's declared type; the error names the input.
Status declare_bound_input(ImportContext& ctx, const onnx::ValueInfoProto& in, const OnnxBoundValue& bound);

// Refuses a binding that names no graph input of the model.
Status check_bound_names(const ImportContext& ctx);

}  // namespace pock::onnx_import
