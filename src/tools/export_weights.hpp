// pockc export without --gguf: trained weights into the source ONNX model (--onnx SOURCE -o OUT),
// and the parameters by their source names as safetensors (--safetensors) or .npz (--npz).
#pragma once
#include "tools/args.hpp"

namespace pock::tools {

Status run_weights_export(const ParsedArgs& args);

}  // namespace pock::tools
