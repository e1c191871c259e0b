// pockc compile --bind: a graph input bound to a value at compile time, written as text
// (NAME=v0,v1,...) or read from a NumPy file (NAME=@values.npy).
#pragma once
#include <string>

#include "pock/compiler/onnx.hpp"

namespace pock::tools {

Status add_bind_arg(const std::string& arg, OnnxImportOptions* options);

}  // namespace pock::tools
