#include "tools/blob_signature.hpp"


namespace pock::tools {

const FunctionSig* BlobSignature::function(const std::string& name) const {
  for (const FunctionSig& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status map_blob(const std::string& path, const VerifyOptions& options, MappedFile* file, BlobView* view) {
  if (Status s = file->open(path); !s.is_ok()) {
    return Status(s.code(), s.message() + ": create it with 'pockc compile MODEL -o " + path + "'");
  }
  Status s = open_blob(file->data(), file->size(), options, view);
  if (!s.is_ok()) return Status(s.code(), path + ": " + s.message());
  return Status::ok();
}

Result<BlobSignature> read_blob_signature(const std::string& path) {
  MappedFile file;
  BlobView view;
  VerifyOptions options;
  options.check_weights_crc = false;
  POCK_RETURN_IF_ERROR(map_blob(path, options, &file, &view));
  POCK_ASSIGN_OR_RETURN(ProgramSpec spec, read_program_spec(view, /*with_weights=*/false));
  auto sig_of = [&](int32_t t) {
    const TensorSpec& d = spec.tensors[static_cast<size_t>(t)];
    return TensorSig{d.name, d.dtype, d.shape, d.trainable};
  };
  BlobSignature sig;
  for (const FunctionSpec& f : spec.functions) {
    FunctionSig fs;
    fs.name = f.name;
    for (int32_t t : f.inputs) fs.inputs.push_back(sig_of(t));
    for (int32_t t : f.outputs) fs.outputs.push_back(sig_of(t));
    fs.has_loss = f.loss >= 0;
    sig.functions.push_back(std::move(fs));
  }
  for (const TensorSpec& t : spec.tensors) {
    if (t.kind == TensorKind::kParameter) sig.parameters.push_back(TensorSig{t.name, t.dtype, t.shape, t.trainable});
  }
  return sig;
}

}  // namespace pock::tools
