#include "tools/model_loader.hpp"

#include <cstdio>
#include <filesystem>

#include "pock/compiler/gguf.hpp"

#ifdef POCK_HAVE_ONNX
#include "pock/compiler/onnx.hpp"
#endif

namespace pock::tools {

Result<Graph> load_model(const std::string& path, const ModelLoadOptions& options) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".gguf") {
    // input_ids [batch, seq]: batch from the recipe, both from --input-shape input_ids=B,T.
    GgufImportOptions gguf;
    gguf.decode_cache = options.kv_cache;
    if (options.batch_size > 0) gguf.batch = options.batch_size;
    for (const std::string& arg : options.input_shapes) {
      int64_t b = 0, t = 0;
      if (std::sscanf(arg.c_str(), "input_ids=%ld,%ld", &b, &t) != 2 || b < 1 || t < 1) {
        return Status(Code::kInvalidArgument, "a .gguf model takes --input-shape input_ids=BATCH,SEQ, not '" + arg + "'");
      }
      gguf.batch = options.batch_size > 0 ? options.batch_size : b;
      gguf.seq_len = t;
    }
    return import_gguf(path, gguf);
  }
  if (options.kv_cache > 0) return Status(Code::kInvalidArgument, "--kv-cache applies to language models read from .gguf files");
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
  return Status(Code::kUnsupportedOp, "'" + path + "': pockc compile reads .onnx and .gguf models");
}

}  // namespace pock::tools
