// The llama configuration a GGUF file's metadata describes, checked against its tensors (every
// tensor the configuration implies exists with its shape); shared by import and export.
#pragma once
#include "frontend/gguf/gguf_file.hpp"
#include "pock/compiler/gguf.hpp"
#include "pock/compiler/models.hpp"

namespace pock {

Result<models::LlamaConfig> llama_config(const gguf::File& f, const GgufImportOptions& o);

}  // namespace pock
