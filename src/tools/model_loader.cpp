#include "tools/model_loader.hpp"

#include <cstdio>
#include <filesystem>

#include "pock/compiler/gguf.hpp"
#include "pock/compiler/safetensors.hpp"

#ifdef POCK_HAVE_ONNX
#include "tools/bind_arg.hpp"
#endif

namespace pock::tools {
namespace {

// A Hugging Face folder: every --input-shape is NAME=BATCH,SEQ for input_ids, attention_mask or
// token_type_ids (naming one of the last two adds that input to a BERT model), all alike.
Result<Graph> load_hf_folder(const std::string& path, const ModelLoadOptions& options) {
  HfImportOptions hf;
  hf.decode_cache = options.kv_cache;
  hf.num_labels = options.num_labels;
  for (const std::string& arg : options.input_shapes) {
    char name[32] = {};
    int64_t b = 0, t = 0;
    const std::string input = std::sscanf(arg.c_str(), "%31[a-z_]=%ld,%ld", name, &b, &t) == 3 ? name : "";
    if ((input != "input_ids" && input != "attention_mask" && input != "token_type_ids") || b < 1 || t < 1) {
      return Status(Code::kInvalidArgument, "a Hugging Face model folder takes --input-shape input_ids=BATCH,SEQ (or "
                                            "attention_mask=, token_type_ids= to add those inputs), not '" + arg + "'");
    }
    hf.batch = b;
    hf.seq_len = t;
    hf.attention_mask |= input == "attention_mask";
    hf.token_type_ids |= input == "token_type_ids";
  }
  if (options.batch_size > 0) hf.batch = options.batch_size;
  return import_hf_folder(path, hf);
}

}  // namespace

Result<Graph> load_model(const std::string& path, const ModelLoadOptions& options) {
  const std::string ext = std::filesystem::path(path).extension().string();
  std::error_code ec;
  if (!options.binds.empty() && ext != ".onnx") {
    return Status(Code::kInvalidArgument, "--bind binds inputs of ONNX models; '" + path + "' is not an .onnx file");
  }
  if (std::filesystem::exists(std::filesystem::path(path) / "config.json", ec)) return load_hf_folder(path, options);
  if (options.num_labels >= 0) return Status(Code::kInvalidArgument, "--num-labels applies to Hugging Face BERT folders");
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
  if (options.kv_cache > 0) {
    return Status(Code::kInvalidArgument, "--kv-cache applies to language models read from .gguf files or Hugging Face folders");
  }
  if (ext == ".onnx") {
#ifdef POCK_HAVE_ONNX
    OnnxImportOptions onnx;
    onnx.batch_size = options.batch_size;
    for (const std::string& arg : options.input_shapes) POCK_RETURN_IF_ERROR(parse_input_shape_arg(arg, &onnx));
    for (const std::string& arg : options.binds) POCK_RETURN_IF_ERROR(add_bind_arg(arg, &onnx));
    return import_onnx(path, onnx);
#else
    return Status(Code::kUnsupportedOp, "this pockc was built without the ONNX frontend (POCK_WITH_ONNX=OFF)");
#endif
  }
  return Status(Code::kUnsupportedOp,
                "'" + path + "': pockc compile reads .onnx and .gguf models and Hugging Face folders (with config.json)");
}

}  // namespace pock::tools
