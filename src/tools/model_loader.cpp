#include "tools/model_loader.hpp"

#include <filesystem>

#ifdef POCK_HAVE_ONNX
#include "pock/compiler/onnx.hpp"
#endif

namespace pock::tools {

Result<Graph> load_model(const std::string& path, const ModelLoadOptions& options) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".onnx") {
#ifdef POCK_HAVE_ONNX
    OnnxImportOptions onnx;
    onnx.batch_size = options.batch_size;
    for (const std::string& arg : options.input_shapes) POCK_RETURN_IF_ERROR(parse_input_shape_arg(arg, &onnx));
    return import_onnx(path, onnx);
#else
    return Status(Code::kUnsupportedOp, "this pockc was built without the ONNX frontend (POCK_WITH_ONNX=OFF)");
#endif
  }
  return Status(Code::kUnsupportedOp, "'" + path + "': pockc compile reads .onnx models (other formats: not in this build)");
}

}  // namespace pock::tools
