#include "tools/blob_contents.hpp"

#include "tools/blob_metadata.hpp"
#include "tools/blob_signature.hpp"

namespace pock::tools {
namespace {

// The compiler writes "op_phases" as one letter per op (F, L, B, U; see emit.cpp). Blobs from
// before that field count every op as forward.
std::vector<Phase> phases_from_metadata(const nlohmann::json& metadata, size_t num_ops) {
  std::vector<Phase> phases(num_ops, Phase::kForward);
  if (!metadata.contains("op_phases") || !metadata["op_phases"].is_string()) return phases;
  const std::string letters = metadata["op_phases"].get<std::string>();
  for (size_t i = 0; i < num_ops && i < letters.size(); ++i) {
    switch (letters[i]) {
      case 'L': phases[i] = Phase::kLoss; break;
      case 'B': phases[i] = Phase::kBackward; break;
      case 'U': phases[i] = Phase::kUpdate; break;
      default: phases[i] = Phase::kForward; break;
    }
  }
  return phases;
}

}  // namespace

const FunctionSpec* BlobContents::function(const std::string& name) const {
  for (const FunctionSpec& f : spec.functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FunctionSpec* BlobContents::main_function() const {
  const FunctionSpec* train = function("train");
  return train ? train : function("infer");
}

Result<BlobContents> read_blob_contents(const std::string& path) {
  MappedFile file;
  BlobView view;
  POCK_RETURN_IF_ERROR(map_blob(path, VerifyOptions{}, &file, &view));
  return blob_contents_of(view);
}

Result<BlobContents> blob_contents_of(const BlobView& view) {
  BlobContents out;
  POCK_ASSIGN_OR_RETURN(out.spec, read_program_spec(view));
  out.metadata = checked_metadata(out.spec.metadata, &out.metadata_problems);
  out.op_phases = phases_from_metadata(out.metadata, out.spec.ops.size());
  out.op_function.assign(out.spec.ops.size(), -1);
  for (size_t f = 0; f < out.spec.functions.size(); ++f) {
    for (uint32_t op : out.spec.functions[f].ops) out.op_function[op] = static_cast<int>(f);
  }
  return out;
}

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kLoss: return "loss";
    case Phase::kBackward: return "backward";
    case Phase::kUpdate: return "optimizer";
  }
  return "forward";
}

}  // namespace pock::tools
