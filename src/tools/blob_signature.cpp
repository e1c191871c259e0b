#include "tools/blob_signature.hpp"

#include <fstream>
#include <iterator>

#include "blob/reader.hpp"

namespace pock::tools {

const FunctionSig* BlobSignature::function(const std::string& name) const {
  for (const FunctionSig& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Result<BlobSignature> read_blob_signature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open '" + path + "': create it with 'pockc compile MODEL -o " + path + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BlobView view;
  VerifyOptions options;
  options.check_weights_crc = false;  // the engine checks the weights when it opens the blob
  Status s = open_blob(bytes.data(), bytes.size(), options, &view);
  if (!s.is_ok()) return Status(s.code(), path + ": " + s.message());
  POCK_ASSIGN_OR_RETURN(ProgramSpec spec, read_program_spec(view));
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
