#include "tools/bind_arg.hpp"

#include <fstream>
#include <iterator>
#include <vector>

#include "tools/npz.hpp"

namespace pock::tools {

#ifdef POCK_HAVE_ONNX
Status add_bind_arg(const std::string& arg, OnnxImportOptions* options) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq + 1 == arg.size() || arg[eq + 1] != '@') return parse_bind_arg(arg, options);
  const std::string name = arg.substr(0, eq);
  const std::string path = arg.substr(eq + 2);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "--bind " + name + ": cannot open '" + path + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  POCK_ASSIGN_OR_RETURN(NpyArray array, parse_npy(bytes.data(), bytes.size(), path));
  auto dtype = dtype_of_descr(array.descr);
  if (!dtype.is_ok()) return Status(dtype.status().code(), "--bind " + name + ": " + path + ": " + dtype.status().message());
  if (name.empty() || options->bound_inputs.count(name)) {
    return Status(Code::kInvalidArgument, "--bind '" + arg + "': " + (name.empty() ? "no input name" : "the input is bound twice"));
  }
  OnnxBoundValue& value = options->bound_inputs[name];
  value.dtype = dtype.value();
  value.shape = array.shape;
  value.bytes = std::move(array.data);
  return Status::ok();
}
#endif

}  // namespace pock::tools
